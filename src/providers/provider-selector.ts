import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import { Clock } from '../common/clock.js';
import { Forbidden, ServiceUnavailable } from '../common/errors.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG, RUNTIME, type Runtime } from '../config/runtime.js';
import type { Scope } from '../scopes/scopes.js';
import { isUpstreamName, PROVIDER_SCOPES, serves, type UpstreamName } from './capabilities.js';
import { CredentialsCipher, type Credentials } from './credentials.js';
import { DojahAdapter } from './dojah.provider.js';
import type { NormaliseOptions } from './normalise.js';
import { PremblyAdapter } from './prembly.provider.js';
import { VerificationProvider } from './provider.port.js';
import { ResilientProvider, UpstreamPolicies } from './resilience.js';
import { HumanFaceChecks } from '../face-checks/human-face-checks.js';
import { SandboxProvider } from './sandbox.provider.js';
import type { UpstreamAdapter } from './upstream.js';

/** Built providers kept per configuration (a changed configuration has another cache key). */
const MAX_CACHED_PROVIDERS = 1_000;

interface StoredSetting {
  readonly provider?: unknown;
  readonly fallback?: unknown;
  readonly credentials?: unknown;
  readonly fallbackCredentials?: unknown;
}

/**
 * Which register answers a key: test keys always the sandbox; live keys the upstream configured
 * for the organization (`organizations.providers.live`), with its secondary when one is
 * configured. With none configured, the embedded default runs live keys on the sandbox so the
 * whole live flow can be tried locally; anywhere else that is a 403 naming the missing
 * configuration. Every refusal here happens before anything is written.
 */
@Injectable()
export class ProviderSelector {
  private readonly logger = new Logger('ProviderSelector');
  private readonly sandbox: SandboxProvider;
  private readonly built = new Map<string, VerificationProvider>();
  private readonly normaliseOptions: () => NormaliseOptions;

  constructor(
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(CredentialsCipher) private readonly cipher: CredentialsCipher,
    @Inject(UpstreamPolicies) private readonly policies: UpstreamPolicies,
    @Inject(Clock) clock: Clock,
  ) {
    this.normaliseOptions = () => ({ referenceYear: clock.now().getUTCFullYear() });
    // The sandbox's face_match compares real faces for the people who have one (docs/sandbox.md).
    this.sandbox = new SandboxProvider(config.providers.sandboxLatencyMs, new HumanFaceChecks());
  }

  select(key: AuthenticatedKey, scope: Scope): VerificationProvider {
    if (key.environment === 'test') return this.sandbox;
    const configured = key.organization.providers.live as StoredSetting | undefined;
    const name = typeof configured?.provider === 'string' ? configured.provider : undefined;
    if (configured === undefined || name === undefined) {
      if (this.runtime.embedded) return this.sandbox;
      throw new Forbidden(
        'provider_not_configured',
        'No live provider is configured for this organization: an operator must configure the live upstream provider (PUT /admin/v1/organizations/{id}/provider)',
        {
          missing: 'providers.live',
        },
      );
    }
    if (name === 'sandbox') return this.sandbox;
    if (!isUpstreamName(name))
      throw new Forbidden('provider_not_configured', `The live provider "${name.slice(0, 50)}" configured for this organization is not available in this version`, {
        missing: `provider:${name.slice(0, 50)}`,
      });
    if (!serves(name, scope)) {
      throw new Forbidden('scope_not_supported_by_provider', `The scope ${scope} is not served by this organization's provider (${name})`, {
        provider: name,
        supportedScopes: [...PROVIDER_SCOPES[name]],
      });
    }
    const cacheKey = createHash('sha256')
      .update(JSON.stringify([key.organizationId, name, configured.credentials, configured.fallback, configured.fallbackCredentials]))
      .digest('hex');
    let provider = this.built.get(cacheKey);
    if (provider === undefined) {
      provider = this.build(key.organizationId, name, configured);
      if (this.built.size >= MAX_CACHED_PROVIDERS) this.built.clear();
      this.built.set(cacheKey, provider);
    }
    return provider;
  }

  private build(organizationId: string, name: UpstreamName, configured: StoredSetting): VerificationProvider {
    const chain: UpstreamAdapter[] = [this.adapter(organizationId, name, 'primary', configured.credentials)];
    if (isUpstreamName(configured.fallback) && configured.fallback !== name)
      chain.push(this.adapter(organizationId, configured.fallback, 'fallback', configured.fallbackCredentials));
    return new ResilientProvider(chain, this.policies);
  }

  private adapter(organizationId: string, name: UpstreamName, role: 'primary' | 'fallback', sealed: unknown): UpstreamAdapter {
    let credentials: Credentials;
    try {
      if (typeof sealed !== 'string') throw new Error('no credentials stored');
      credentials = this.cipher.decrypt(sealed, { organizationId, environment: 'live', role, provider: name });
    } catch {
      // Never the ciphertext or the reason in detail: only that an operator has to act.
      this.logger.error(`The ${role} ${name} credentials of an organization cannot be decrypted (PROVIDER_CREDENTIALS_KEY changed?)`);
      throw new ServiceUnavailable("The organization's provider credentials cannot be read; an operator must configure the provider again");
    }
    const { dojahBaseUrl, premblyBaseUrl } = this.config.providers;
    switch (name) {
      case 'dojah':
        return new DojahAdapter(dojahBaseUrl, { appId: credentials.appId ?? '', secretKey: credentials.secretKey ?? '' }, this.normaliseOptions);
      case 'prembly':
        return new PremblyAdapter(premblyBaseUrl, { appId: credentials.appId ?? '', apiKey: credentials.apiKey ?? '' }, this.normaliseOptions);
      default: {
        const _exhaustive: never = name;
        throw new Error(`invariant: unknown upstream ${String(_exhaustive)}`);
      }
    }
  }
}
