import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiResponse } from '@nestjs/swagger';
import pg from 'pg';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import type { AppConfig } from '../config/config.js';
import { ok } from '../common/envelope.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiRoute, ApiSuccess, type Schema } from '../common/openapi.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { describeHoldback, type LogHoldback } from '../event-store/postgres-log-holdback.js';
import { HELD_BACK_DEGRADED_SECONDS, LogHoldbackMonitor } from './log-holdback.monitor.js';

const READY_CHECK_TIMEOUT_MS = 2_000;

const CHECKS: Schema = {
  type: 'object',
  required: ['postgres', 'eventStore', 'eventStoreKind'],
  properties: {
    postgres: { type: 'string', enum: ['ok', 'down'] },
    eventStore: { type: 'string', enum: ['ok', 'down'] },
    eventStoreKind: { type: 'string', enum: ['postgres', 'esdb'] },
    eventLog: {
      type: 'object',
      description: 'PostgreSQL log only: whether committed events wait behind an open transaction (held_back once for 5 s or more), and which backend holds them',
      required: ['status', 'heldBackSeconds', 'heldBackEvents', 'holder'],
      properties: {
        status: { type: 'string', enum: ['ok', 'held_back'] },
        heldBackSeconds: { type: 'number', minimum: 0 },
        heldBackEvents: { type: 'integer', minimum: 0 },
        holder: { type: ['object', 'null'], additionalProperties: true },
      },
    },
    recovery: {
      type: 'object',
      description:
        'Checks the recovery process cannot settle (a damaged stream, an event it cannot fold): `unsettled` while there is one or more; GET /admin/v1/recovery/unsettled lists them',
      required: ['status', 'unsettledChecks'],
      properties: {
        status: { type: 'string', enum: ['ok', 'unsettled'] },
        unsettledChecks: { type: 'integer', minimum: 0 },
      },
    },
  },
};

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
  @ApiRoute('getHealth', 'Health', 'Check that the API is reachable', "No key. It runs no check and calls no provider, so it does not prove that a scope's provider is available.")
  @ApiSuccess(200, 'Reachable', {
    type: 'object',
    required: ['service', 'status'],
    properties: { service: { type: 'string', example: 'identity-verification-service' }, status: { const: 'ok' } },
  })
  @ApiErrors(ANY_ROUTE_ERRORS)
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
  @ApiRoute(
    'getReadiness',
    'Operations',
    'Check readiness',
    'For load balancers: 200 when PostgreSQL and the event store both answer (within 2 s each), `degraded` while the PostgreSQL log is held back or recovery has checks it cannot settle, else 503. No key.',
  )
  @ApiSuccess(200, 'Ready, or degraded (the PostgreSQL log held back, or checks recovery cannot settle: `reasons` says what)', {
    type: 'object',
    required: ['status', 'checks'],
    properties: { status: { type: 'string', enum: ['ready', 'degraded'] }, checks: CHECKS, reasons: { type: 'array', items: { type: 'string' } } },
  })
  @ApiResponse({
    status: 503,
    description: '`service_unavailable`: a backing store does not answer (details.checks says which), or the service is shutting down',
    content: {
      'application/json': {
        schema: {
          anyOf: [
            { $ref: '#/components/schemas/ServiceUnavailableError' },
            {
              type: 'object',
              required: ['status', 'error'],
              properties: {
                status: { const: false },
                error: {
                  type: 'object',
                  required: ['code', 'message', 'details'],
                  properties: {
                    code: { const: 'service_unavailable' },
                    message: { type: 'string' },
                    details: { type: 'object', required: ['checks'], properties: { checks: CHECKS } },
                  },
                },
              },
            },
          ],
        } as never,
      },
    },
  })
  @ApiErrors(ANY_ROUTE_ERRORS.filter((code) => code !== 'service_unavailable'))
  async ready(@Res() reply: FastifyReply): Promise<void> {
    let holdback: LogHoldback | null = null;
    let unsettled: number | undefined;
    const [postgres, eventStore] = await Promise.all([
      check(() => this.pool.query('select 1')),
      check(() => this.eventStore.ping()),
      check(async () => (holdback = await this.holdback.read())),
      check(async () => (unsettled = await this.unsettledChecks())),
    ]);
    const log = holdbackCheck(holdback);
    const recovery = unsettled === undefined ? undefined : { status: unsettled > 0 ? 'unsettled' : 'ok', unsettledChecks: unsettled };
    const checks = {
      postgres,
      eventStore: eventStore,
      eventStoreKind: this.eventStore.kind,
      ...(log === undefined ? {} : { eventLog: log.check }),
      ...(recovery === undefined ? {} : { recovery }),
    };
    if (postgres === 'ok' && eventStore === 'ok') {
      // Both degrade readiness without failing it: this instance still serves.
      const reasons = [
        ...(log?.reason === undefined ? [] : [log.reason]),
        ...(unsettled !== undefined && unsettled > 0
          ? [`${unsettled} checks cannot be settled by recovery (their money stays held); GET /admin/v1/recovery/unsettled lists them`]
          : []),
      ];
      await reply.status(200).send(ok({ status: reasons.length > 0 ? 'degraded' : 'ready', checks, ...(reasons.length > 0 ? { reasons } : {}) }));
      return;
    }
    await reply.status(503).send({ status: false, error: { code: 'service_unavailable', message: 'A backing store is unavailable', details: { checks } } });
  }

  private async unsettledChecks(): Promise<number> {
    const { rows } = await this.pool.query<{ count: string }>('select count(*) from verification_recovery_unsettled');
    return Number(rows[0]?.count ?? 0);
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
