import { Module } from '@nestjs/common';
import { ProvidersModule } from '../providers/providers.module.js';
import { WalletsModule } from '../wallets/wallets.module.js';
import { PaymentsController } from './payments.controller.js';
import { PaystackKeyController } from './paystack-key.controller.js';
import { OperatorTopUpsController } from './operator-topups.controller.js';
import { TopUpLimitsController } from './topup-limits.controller.js';
import { TopUpResolutions } from './topup-resolution.js';
import { TopUpRecoverySweep } from './topup-recovery.js';
import { TopUps } from './topups.service.js';

/** Wallet top-ups paid through a payment rail (Paystack, or the sandbox rail). */
@Module({
  imports: [WalletsModule, ProvidersModule],
  controllers: [PaymentsController, TopUpLimitsController, OperatorTopUpsController, PaystackKeyController],
  providers: [TopUps, TopUpRecoverySweep, TopUpResolutions],
  exports: [TopUps, TopUpResolutions],
})
export class PaymentsModule {}
