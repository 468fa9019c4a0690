import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../common/clock.js';
import { InvariantViolated } from '../common/errors.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { ApproveOrganization, DestroyPersonalData, ReinstateOrganization, RenameOrganization, RequestLiveAccess, SetActiveScopes, SetRateLimit, SetRetention, SetScopePrices, SuspendOrganization } from './organization.commands.js';
import { OrganizationStore } from './organization.store.js';
import { organizationView, type OrganizationView } from './organization.views.js';

@CommandHandler(ApproveOrganization)
export class ApproveOrganizationHandler implements ICommandHandler<ApproveOrganization, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, context, options }: ApproveOrganization): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'ApproveOrganization' }, context, options);
    return organizationView(state);
  }
}

@CommandHandler(RequestLiveAccess)
export class RequestLiveAccessHandler implements ICommandHandler<RequestLiveAccess, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, context, options }: RequestLiveAccess): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'RequestLiveAccess' }, context, options);
    return organizationView(state);
  }
}

@CommandHandler(SuspendOrganization)
export class SuspendOrganizationHandler implements ICommandHandler<SuspendOrganization, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, reason, context, options }: SuspendOrganization): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'SuspendOrganization', reason }, context, options);
    return organizationView(state);
  }
}

@CommandHandler(ReinstateOrganization)
export class ReinstateOrganizationHandler implements ICommandHandler<ReinstateOrganization, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, context, options }: ReinstateOrganization): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'ReinstateOrganization' }, context, options);
    return organizationView(state);
  }
}

@CommandHandler(SetActiveScopes)
export class SetActiveScopesHandler implements ICommandHandler<SetActiveScopes, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, scopes, context, options }: SetActiveScopes): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'SetActiveScopes', scopes }, context, options);
    return organizationView(state);
  }
}

@CommandHandler(SetScopePrices)
export class SetScopePricesHandler implements ICommandHandler<SetScopePrices, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, pricesKobo, context, options }: SetScopePrices): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'SetScopePrices', pricesKobo }, context, options);
    return organizationView(state);
  }
}

@CommandHandler(RenameOrganization)
export class RenameOrganizationHandler implements ICommandHandler<RenameOrganization, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, name, context, options }: RenameOrganization): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'RenameOrganization', name }, context, options);
    return organizationView(state);
  }
}

@CommandHandler(SetRateLimit)
export class SetRateLimitHandler implements ICommandHandler<SetRateLimit, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, requestsPerMinute, context, options }: SetRateLimit): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'SetRateLimit', requestsPerMinute }, context, options);
    return organizationView(state);
  }
}

@CommandHandler(SetRetention)
export class SetRetentionHandler implements ICommandHandler<SetRetention, OrganizationView> {
  constructor(@Inject(OrganizationStore) private readonly organizations: OrganizationStore) {}

  async execute({ organizationId, retentionDays, context, options }: SetRetention): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'SetRetention', retentionDays }, context, options);
    return organizationView(state);
  }
}

/**
 * Offboarding: PersonalDataDestroyed recorded first (with the operator), then the keys destroyed
 * at its time; a retry after a crash between the two finds the event and destroys the keys.
 * The wallet, its history and the audit carry no personal data and stay whole.
 */
@CommandHandler(DestroyPersonalData)
export class DestroyPersonalDataHandler implements ICommandHandler<DestroyPersonalData, OrganizationView> {
  constructor(
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(Clock) private readonly clock: Clock,
  ) {}

  async execute({ organizationId, context, options }: DestroyPersonalData): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'DestroyPersonalData', at: this.clock.now() }, context, options, 'answer');
    if (state.personalDataDestroyedAt === null) throw new InvariantViolated(`the offboarding of ${organizationId} left its keys standing`);
    await this.keys.destroyOrganization(organizationId, state.personalDataDestroyedAt);
    return organizationView(state);
  }
}
