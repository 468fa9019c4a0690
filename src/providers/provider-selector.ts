import { Inject, Injectable } from '@nestjs/common';
import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import { Forbidden } from '../common/errors.js';
import { RUNTIME, type Runtime } from '../core.module.js';
import { VerificationProvider } from './provider.port.js';
import { SandboxProvider } from './sandbox.provider.js';

/**
 * Which register answers a key: test keys always the sandbox; live keys the upstream configured
 * for the organization (`organizations.providers.live`). With none configured, the embedded
 * default runs live keys on the sandbox so the whole live flow can be tried locally; anywhere else
 * that is a 403 naming the missing configuration, checked before anything is written.
 */
@Injectable()
export class ProviderSelector {
  private readonly sandbox = new SandboxProvider();

  constructor(@Inject(RUNTIME) private readonly runtime: Runtime) {}

  select(key: AuthenticatedKey): VerificationProvider {
    if (key.environment === 'test') return this.sandbox;
    const configured = key.organization.providers.live as { provider?: unknown } | undefined;
    const name = typeof configured?.provider === 'string' ? configured.provider : undefined;
    if (name === undefined) {
      if (this.runtime.embedded) return this.sandbox;
      throw new Forbidden('provider_not_configured', 'No live provider is configured for this organization: an operator must configure the live upstream provider (ProviderConfigured for environment live)', {
        missing: 'providers.live',
      });
    }
    if (name === 'sandbox') return this.sandbox;
    throw new Forbidden('provider_not_configured', `The live provider "${name}" configured for this organization is not available in this version`, { missing: `provider:${name}` });
  }
}
