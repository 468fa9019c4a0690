import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { EventSourcedWalletLedger } from './wallet-ledger.js';
import { WalletLedger } from './wallet-ledger.port.js';
import { WalletController } from './integrator-wallet.controller.js';
import { WalletsController } from './operator-wallets.controller.js';
import { PostgresWalletSnapshots, WalletSnapshots } from './wallet-snapshots.js';

@Module({
  imports: [CqrsModule],
  controllers: [WalletsController, WalletController],
  providers: [{ provide: WalletLedger, useClass: EventSourcedWalletLedger }, { provide: WalletSnapshots, useClass: PostgresWalletSnapshots }, ApiKeyGuard],
  exports: [WalletLedger],
})
export class WalletsModule {}
