import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { DataProtectionModule } from '../data-protection/data-protection.module.js';
import { FilePortraitStore, PortraitStore } from './portrait.store.js';
import { PortraitsController } from './portraits.controller.js';
import { Portraits } from './portraits.service.js';

@Module({
  imports: [DataProtectionModule],
  controllers: [PortraitsController],
  providers: [{ provide: PortraitStore, inject: [CONFIG], useFactory: (config: AppConfig) => FilePortraitStore.open(config) }, Portraits],
  exports: [Portraits, PortraitStore],
})
export class PortraitsModule implements OnApplicationShutdown {
  constructor(@Inject(PortraitStore) private readonly store: PortraitStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
