import { Module } from '@nestjs/common';
import type pg from 'pg';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { masterKey } from '../data-protection/master-key.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { WalletHistoryController } from './auditor-wallet-history.controller.js';
import { HistoryCheckpoints, historyCheckpointKey } from './history-checkpoints.js';
import { WalletHistory } from './wallet-history.js';

/** The auditors' HTTP side: wallet histories replayed from the event log (the CLI is `npm run audit:wallet`). */
@Module({
  controllers: [WalletHistoryController],
  providers: [
    {
      provide: WalletHistory,
      inject: [EVENT_STORE, PG_POOL, CONFIG],
      useFactory: async (store: EventStore, pool: pg.Pool, config: AppConfig) => new WalletHistory(store, new HistoryCheckpoints(pool, historyCheckpointKey(await masterKey(config)))),
    },
  ],
})
export class AuditModule {}
