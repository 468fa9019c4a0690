import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../core.module.js';
import { Clock } from '../common/clock.js';
import { toAppend } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { EVENT_STORE, WrongExpectedRevisionError, type EventStore } from '../event-store/event-store.port.js';
import { SANDBOX_CREDIT_REFERENCE, type WalletFunded } from '../wallets/wallet.events.js';
import { SCHEMA_VERSION } from './organization.decider.js';
import { RegisterOrganization } from './organization.commands.js';
import { OrganizationStore } from './organization.store.js';
import { organizationView, type OrganizationView } from './organization.views.js';

const CREDIT_ATTEMPTS = 3;
const CREDIT_RETRY_DELAY_MS = 200;

@CommandHandler(RegisterOrganization)
export class RegisterOrganizationHandler implements ICommandHandler<RegisterOrganization, OrganizationView> {
  constructor(
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
  ) {}

  async execute({ input, context, options }: RegisterOrganization): Promise<OrganizationView> {
    const organizationId = this.ids.organizationId();
    const registered = await this.organizations.execute(
      organizationId,
      { type: 'RegisterOrganization', organizationId, name: input.name, email: input.email, activeScopes: this.config.verifications.defaultActiveScopes },
      context,
      { projectionWaitMs: 0 },
    );
    await this.creditSandbox(organizationId, context);
    if (registered.position !== null) await this.organizations.waitForProjections(registered.position, options.projectionWaitMs);
    return organizationView(registered.state);
  }

  /** Once per test wallet: the stream must not exist yet, so a retried registration cannot credit twice. */
  private async creditSandbox(organizationId: string, context: RegisterOrganization['context']): Promise<void> {
    const amountKobo = this.config.verifications.sandboxCreditKobo;
    if (amountKobo === 0) return;
    const funded: WalletFunded = {
      type: 'WalletFunded',
      data: { schemaVersion: SCHEMA_VERSION, organizationId, environment: 'test', fundingReference: SANDBOX_CREDIT_REFERENCE, amountKobo },
    };
    const append = toAppend(funded, this.ids.eventId(), context, this.clock.now());
    // The organization is already written: a passing failure of the store must not leave it without its credit.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.store.append(streams.wallet(organizationId, 'test'), [append], { expectedRevision: 'no_stream' });
        return;
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError) return;
        if (attempt >= CREDIT_ATTEMPTS) throw error;
        await new Promise((resolveDelay) => setTimeout(resolveDelay, CREDIT_RETRY_DELAY_MS * attempt));
      }
    }
  }
}
