import { Global, Module } from '@nestjs/common';
import type pg from 'pg';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { ContactData } from './contact-data.js';
import { DataKeys, DEFAULT_CACHE_LIMITS } from './data-keys.js';
import { KeyManagement } from './key-management.port.js';
import { keyManagement } from './master-key.js';

/** The key hierarchy for every feature that seals personal data (verifications, portraits, contact data). */
@Global()
@Module({
  providers: [
    { provide: KeyManagement, inject: [CONFIG], useFactory: (config: AppConfig) => keyManagement(config) },
    {
      provide: DataKeys,
      inject: [PG_POOL, KeyManagement, CONFIG],
      useFactory: (pool: pg.Pool, kms: KeyManagement, config: AppConfig) =>
        new DataKeys(pool, kms, DEFAULT_CACHE_LIMITS, { maxWrapsPerKek: config.dataProtection.organizationKeyMaxWraps }),
    },
    { provide: ContactData, inject: [DataKeys, PG_POOL], useFactory: (keys: DataKeys, pool: pg.Pool) => new ContactData(keys, pool) },
  ],
  exports: [KeyManagement, DataKeys, ContactData],
})
export class DataProtectionModule {}
