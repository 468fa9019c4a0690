import { Module } from '@nestjs/common';
import { WalletsModule } from '../wallets/wallets.module.js';
import { PaymentsController } from './payments.controller.js';
import { TopUpLimitsController } from './topup-limits.controller.js';
import { TopUpRecoverySweep } from './topup-recovery.js';
import { TopUps } from './topups.service.js';

/** Wallet top-ups paid through a payment rail (Paystack, or the sandbox rail). */
@Module({
  imports: [WalletsModule],
  controllers: [PaymentsController, TopUpLimitsController],
  providers: [TopUps, TopUpRecoverySweep],
  exports: [TopUps],
})
export class PaymentsModule {}
