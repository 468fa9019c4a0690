import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { NotFound, ValidationFailed } from '../common/errors.js';
import { isProviderName } from '../providers/capabilities.js';
import { CredentialsCipher, parseCredentials } from '../providers/credentials.js';
import { ConfigureProvider } from './organization.commands.js';
import { ORGANIZATION_ID, OrganizationStore } from './organization.store.js';
import { ContactData } from '../data-protection/contact-data.js';
import { organizationView, withOpenedEmail, type OrganizationView } from './organization.views.js';

/**
 * `PUT /admin/v1/organizations/{id}/provider` and `admin provider set`: checks the credentials'
 * fields, encrypts them bound to this organization, environment, role and provider, and lets the
 * decider check the rest. The plain credentials go no further than this handler.
 */
@CommandHandler(ConfigureProvider)
export class ConfigureProviderHandler implements ICommandHandler<ConfigureProvider, OrganizationView> {
  constructor(
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Inject(CredentialsCipher) private readonly cipher: CredentialsCipher,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {}

  async execute({ organizationId, input, context, options }: ConfigureProvider): Promise<OrganizationView> {
    if (!ORGANIZATION_ID.test(organizationId)) throw new NotFound('No organization with that id');
    const primary = isProviderName(input.provider) ? parseCredentials(input.provider, input.credentials, 'credentials') : { credentials: null, errors: [] };
    const fallback =
      input.fallback !== null && isProviderName(input.fallback.provider)
        ? parseCredentials(input.fallback.provider, input.fallback.credentials, 'fallback.credentials')
        : { credentials: null, errors: [] };
    const errors = [...primary.errors, ...fallback.errors];
    if (errors.length > 0) throw new ValidationFailed(errors);
    const seal = (credentials: Readonly<Record<string, string>> | null, role: 'primary' | 'fallback', provider: string) =>
      credentials === null ? null : this.cipher.encrypt(credentials, { organizationId, environment: input.environment, role, provider });
    const { state } = await this.organizations.execute(
      organizationId,
      {
        type: 'ConfigureProvider',
        environment: input.environment,
        provider: input.provider,
        credentials: seal(primary.credentials, 'primary', input.provider),
        fallback: input.fallback === null ? null : { provider: input.fallback.provider, credentials: seal(fallback.credentials, 'fallback', input.fallback.provider) },
      },
      context,
      options,
    );
    return withOpenedEmail(this.contacts, organizationView(state));
  }
}
