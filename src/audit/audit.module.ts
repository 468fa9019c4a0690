import { Module } from '@nestjs/common';
import type pg from 'pg';
import { KeyManagement } from '../data-protection/key-management.port.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { WalletHistoryController } from './auditor-wallet-history.controller.js';
import { HISTORY_CHECKPOINT_KEY_INFO, HistoryCheckpoints } from './history-checkpoints.js';
import { WalletHistory } from './wallet-history.js';

/** The auditors' HTTP side: wallet histories replayed from the event log (the CLI is `npm run audit:wallet`). */
@Module({
  controllers: [WalletHistoryController],
  providers: [
    {
      provide: WalletHistory,
      inject: [EVENT_STORE, PG_POOL, KeyManagement],
      // HKDF of the master key (its adapter derives it: the PKCS#11 token's key never leaves it).
      useFactory: async (store: EventStore, pool: pg.Pool, kms: KeyManagement) =>
        new WalletHistory(store, new HistoryCheckpoints(pool, await kms.derive(HISTORY_CHECKPOINT_KEY_INFO))),
    },
  ],
})
export class AuditModule {}
