import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../core.module.js';
import { FilePortraitStore, PortraitStore } from './portrait.store.js';
import { PortraitsController } from './portraits.controller.js';
import { Portraits } from './portraits.service.js';

@Module({
  controllers: [PortraitsController],
  providers: [{ provide: PortraitStore, inject: [CONFIG], useFactory: (config: AppConfig) => FilePortraitStore.open(config) }, Portraits],
  exports: [Portraits, PortraitStore],
})
export class PortraitsModule {}
