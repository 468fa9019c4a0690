import { Global, Module } from '@nestjs/common';
import type pg from 'pg';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { DataKeys } from './data-keys.js';
import { KeyManagement, LocalKeyManagement } from './key-management.port.js';
import { masterKey } from './master-key.js';

/** The key hierarchy for every feature that seals personal data (verifications, portraits). */
@Global()
@Module({
  providers: [
    { provide: KeyManagement, inject: [CONFIG], useFactory: async (config: AppConfig) => new LocalKeyManagement(await masterKey(config)) },
    { provide: DataKeys, inject: [PG_POOL, KeyManagement], useFactory: (pool: pg.Pool, kms: KeyManagement) => new DataKeys(pool, kms) },
  ],
  exports: [KeyManagement, DataKeys],
})
export class DataProtectionModule {}
