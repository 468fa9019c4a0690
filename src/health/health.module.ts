import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { LogHoldbackMonitor } from './log-holdback.monitor.js';

@Module({ controllers: [HealthController], providers: [LogHoldbackMonitor] })
export class HealthModule {}
