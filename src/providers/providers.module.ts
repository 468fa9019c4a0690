import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { CredentialsCipher } from './credentials.js';
import { ProviderSelector } from './provider-selector.js';
import { UpstreamPolicies } from './resilience.js';

/** The providers behind verifications, and the cipher that keeps their credentials. One breaker per upstream per process. */
@Module({
  providers: [
    { provide: CredentialsCipher, inject: [CONFIG], useFactory: (config: AppConfig) => CredentialsCipher.open(config) },
    {
      provide: UpstreamPolicies,
      inject: [CONFIG],
      useFactory: (config: AppConfig) =>
        new UpstreamPolicies({
          timeoutMs: config.providers.timeoutMs,
          breakerFailures: config.providers.breakerFailures,
          breakerHalfOpenMs: config.providers.breakerHalfOpenMs,
          retryAttempts: config.providers.retryAttempts,
          retryDelayMs: 50,
        }),
    },
    ProviderSelector,
  ],
  exports: [CredentialsCipher, UpstreamPolicies, ProviderSelector],
})
export class ProvidersModule {}
