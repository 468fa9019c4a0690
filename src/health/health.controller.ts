import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import pg from 'pg';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import type { AppConfig } from '../config/config.js';
import { ok } from '../common/envelope.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';

const READY_CHECK_TIMEOUT_MS = 2_000;

async function check(probe: () => Promise<unknown>): Promise<'ok' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), READY_CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

@Controller()
export class HealthController {
  constructor(
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
  ) {}

  /** The spec's health check: reachability only, no key, no provider call. */
  @Get('v1/health')
  @HttpCode(200)
  health() {
    return ok({ service: this.config.serviceName, status: 'ok' });
  }

  /** Readiness for load balancers: PostgreSQL and the event store both answer, else 503. */
  @Get('health/ready')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const [postgres, eventStore] = await Promise.all([check(() => this.pool.query('select 1')), check(() => this.eventStore.ping())]);
    const checks = { postgres, eventStore: eventStore, eventStoreKind: this.eventStore.kind };
    if (postgres === 'ok' && eventStore === 'ok') {
      await reply.status(200).send(ok({ status: 'ready', checks }));
      return;
    }
    await reply.status(503).send({ status: false, error: { code: 'service_unavailable', message: 'A backing store is unavailable', details: { checks } } });
  }
}
