import { Module } from '@nestjs/common';
import { WalletHistoryController } from './auditor-wallet-history.controller.js';

/** The auditors' HTTP side: wallet histories replayed from the event log (the CLI is `npm run audit:wallet`). */
@Module({ controllers: [WalletHistoryController] })
export class AuditModule {}
