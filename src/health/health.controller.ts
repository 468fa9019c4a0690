import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import pg from 'pg';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import type { AppConfig } from '../config/config.js';
import { ok } from '../common/envelope.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { describeHoldback, type LogHoldback } from '../event-store/postgres-log-holdback.js';
import { HELD_BACK_DEGRADED_SECONDS, LogHoldbackMonitor } from './log-holdback.monitor.js';

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
    @Inject(LogHoldbackMonitor) private readonly holdback: LogHoldbackMonitor,
  ) {}

  /** The spec's health check: reachability only, no key, no provider call. */
  @Get('v1/health')
  @HttpCode(200)
  health() {
    return ok({ service: this.config.serviceName, status: 'ok' });
  }

  /**
   * Readiness for load balancers: PostgreSQL and the event store both answer, else 503. A PostgreSQL
   * log held back for HELD_BACK_DEGRADED_SECONDS or more answers 200 `degraded`, with the reason:
   * this instance still serves, but what every process reads from the log (projections,
   * subscriptions, read-your-writes) waits for the transaction that holds it.
   */
  @Get('health/ready')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    let holdback: LogHoldback | null = null;
    const [postgres, eventStore] = await Promise.all([
      check(() => this.pool.query('select 1')),
      check(() => this.eventStore.ping()),
      check(async () => (holdback = await this.holdback.read())),
    ]);
    const log = holdbackCheck(holdback);
    const checks = { postgres, eventStore: eventStore, eventStoreKind: this.eventStore.kind, ...(log === undefined ? {} : { eventLog: log.check }) };
    if (postgres === 'ok' && eventStore === 'ok') {
      const degraded = log !== undefined && log.reason !== undefined;
      await reply.status(200).send(ok({ status: degraded ? 'degraded' : 'ready', checks, ...(degraded ? { reasons: [log.reason] } : {}) }));
      return;
    }
    await reply.status(503).send({ status: false, error: { code: 'service_unavailable', message: 'A backing store is unavailable', details: { checks } } });
  }
}

function holdbackCheck(holdback: LogHoldback | null): { check: Record<string, unknown>; reason?: string } | undefined {
  if (holdback === null) return undefined;
  const heldBack = holdback.heldBackEvents > 0 && holdback.heldBackSeconds >= HELD_BACK_DEGRADED_SECONDS;
  const check = {
    status: heldBack ? 'held_back' : 'ok',
    heldBackSeconds: Math.round(holdback.heldBackSeconds * 10) / 10,
    heldBackEvents: holdback.heldBackEvents,
    holder: heldBack ? holdback.holder : null,
  };
  return heldBack ? { check, reason: describeHoldback(holdback) } : { check };
}
