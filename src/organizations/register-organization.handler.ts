import { Inject, Logger } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { IdGenerator } from '../common/ids.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { WALLET_PROJECTIONS } from '../wallets/wallet.read-model.js';
import { RegisterOrganization } from './organization.commands.js';
import { validRegistration } from './registration.js';
import { OrganizationStore } from './organization.store.js';
import { SandboxCreditSweep } from './sandbox-credit.js';
import { ContactData } from '../data-protection/contact-data.js';
import { ORGANIZATION_EMAIL_CONTEXT, organizationView, withOpenedEmail, type OrganizationView } from './organization.views.js';

@CommandHandler(RegisterOrganization)
export class RegisterOrganizationHandler implements ICommandHandler<RegisterOrganization, OrganizationView> {
  private readonly logger = new Logger('RegisterOrganization');

  constructor(
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Inject(SandboxCreditSweep) private readonly sandboxCredit: SandboxCreditSweep,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {}

  async execute({ input: given, context, options }: RegisterOrganization): Promise<OrganizationView> {
    // The one check of a registration's fields, whoever registers (the admin API, the CLI, the console's sign-up).
    const input = validRegistration(given);
    const organizationId = options.organizationId ?? this.ids.organizationId();
    const registered = await this.organizations.execute(
      organizationId,
      {
        type: 'RegisterOrganization',
        organizationId,
        name: input.name,
        // Sealed under the organization's own key before it reaches the log: offboarding destroys it.
        email: await this.contacts.seal(organizationId, ORGANIZATION_EMAIL_CONTEXT, input.email),
        activeScopes: this.config.verifications.defaultActiveScopes,
        sandboxCreditKobo: this.config.verifications.sandboxCreditKobo,
      },
      context,
      { projectionWaitMs: 0 },
    );
    // The organization is written and owed its credit: a failure here must not fail the
    // registration (a retry would register a second organization). The sweep finishes it.
    const credit = await this.sandboxCredit.credit(organizationId, context).catch(() => {
      this.logger.warn(`The sandbox credit of ${organizationId} could not be written now; the sandbox-credit sweep will write it`);
      return undefined;
    });
    // Read-your-writes: the organization and its test wallet as the operator's next reads see them.
    const waitMs = options.projectionWaitMs ?? this.config.admin.changeWaitMs;
    await Promise.all([
      registered.position !== null ? this.organizations.waitForProjections(registered.position, waitMs) : undefined,
      credit?.position !== undefined && waitMs > 0 ? this.waiter.waitFor(WALLET_PROJECTIONS, credit.position, waitMs) : undefined,
    ]);
    return withOpenedEmail(this.contacts, organizationView(registered.state));
  }
}
