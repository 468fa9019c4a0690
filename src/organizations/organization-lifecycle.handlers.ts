import { Inject, type Type } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { PG_POOL } from '../database/pool.js';
import { InvariantViolated } from '../common/errors.js';
import { ContactData } from '../data-protection/contact-data.js';
import { DataKeys } from '../data-protection/data-keys.js';
import {
  ApproveOrganization,
  DestroyPersonalData,
  type OrganizationChange,
  ReinstateOrganization,
  RenameOrganization,
  RequestLiveAccess,
  SetActiveScopes,
  SetRateLimit,
  SetRetention,
  SetScopePrices,
  SuspendOrganization,
} from './organization.commands.js';
import type { OrganizationCommand } from './organization.decider.js';
import { OrganizationStore } from './organization.store.js';
import { organizationView, withOpenedEmail, type OrganizationView } from './organization.views.js';

export interface OrganizationHandler<C extends OrganizationChange> {
  execute(command: C): Promise<OrganizationView>;
}

/**
 * The handler of a command that is one decision on the organization's stream: the decider's
 * command made from it, then the organization as it stands after. A class per command, as the
 * command bus finds handlers by their command, named after it for Nest's logs and errors.
 */
function organizationHandler<C extends OrganizationChange>(command: Type<C>, decision: (given: C) => OrganizationCommand): Type<OrganizationHandler<C>> {
  @CommandHandler(command)
  class Handler implements OrganizationHandler<C> {
    constructor(
      @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
      @Inject(ContactData) private readonly contacts: ContactData,
    ) {}

    async execute(given: C): Promise<OrganizationView> {
      const { state } = await this.organizations.execute(given.organizationId, decision(given), given.context, given.options);
      return withOpenedEmail(this.contacts, organizationView(state));
    }
  }
  Object.defineProperty(Handler, 'name', { value: `${command.name}Handler` });
  return Handler;
}

export const ApproveOrganizationHandler = organizationHandler(ApproveOrganization, () => ({ type: 'ApproveOrganization' }));
export const RequestLiveAccessHandler = organizationHandler(RequestLiveAccess, () => ({ type: 'RequestLiveAccess' }));
export const SuspendOrganizationHandler = organizationHandler(SuspendOrganization, ({ reason }) => ({ type: 'SuspendOrganization', reason }));
export const ReinstateOrganizationHandler = organizationHandler(ReinstateOrganization, () => ({ type: 'ReinstateOrganization' }));
export const RenameOrganizationHandler = organizationHandler(RenameOrganization, ({ name }) => ({ type: 'RenameOrganization', name }));
export const SetActiveScopesHandler = organizationHandler(SetActiveScopes, ({ scopes }) => ({ type: 'SetActiveScopes', scopes }));
export const SetScopePricesHandler = organizationHandler(SetScopePrices, ({ pricesKobo }) => ({ type: 'SetScopePrices', pricesKobo }));
export const SetRateLimitHandler = organizationHandler(SetRateLimit, ({ requestsPerMinute }) => ({ type: 'SetRateLimit', requestsPerMinute }));
export const SetRetentionHandler = organizationHandler(SetRetention, ({ retentionDays }) => ({ type: 'SetRetention', retentionDays }));

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
    @Inject(ContactData) private readonly contacts: ContactData,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
  ) {}

  async execute({ organizationId, context, options }: DestroyPersonalData): Promise<OrganizationView> {
    const { state } = await this.organizations.execute(organizationId, { type: 'DestroyPersonalData', at: this.clock.now() }, context, options, 'answer');
    if (state.personalDataDestroyedAt === null) throw new InvariantViolated(`the offboarding of ${organizationId} left its keys standing`);
    await this.keys.destroyOrganization(organizationId, state.personalDataDestroyedAt);
    // Its console accounts and open invitations go too (their sessions and links with them): their
    // emails were sealed under the keys just destroyed, and nobody is left to sign in for it.
    await this.pool.query('delete from console_tokens where organization_id = $1', [organizationId]);
    await this.pool.query('delete from console_users where organization_id = $1', [organizationId]);
    return withOpenedEmail(this.contacts, organizationView(state));
  }
}
