import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type pg from 'pg';
import client from 'prom-client';
import { PG_POOL } from '../../src/database/pool.js';
import { EVENT_STORE, type EventStore } from '../../src/event-store/event-store.port.js';
import { PROJECTIONS } from '../index.js';
import { readProjectionStatus, type ProjectionStatus } from './projection-status.js';

/** A scrape must not hang on a slow store: past this, the lag gauges are left out of the answer. */
const READ_TIMEOUT_MS = 2_000;
/** Both gauges of one scrape share one status read. */
const READ_REUSE_MS = 1_000;

type StatusReader = () => Promise<ProjectionStatus[]>;

/**
 * Which status reader the gauges use. One per process in production; when tests run several app
 * instances in one process (on one database), the latest started answers.
 */
const readers: StatusReader[] = [];
let lastRead: { atMs: number; statuses: Promise<ProjectionStatus[] | undefined> } | undefined;

function currentStatuses(): Promise<ProjectionStatus[] | undefined> {
  const reader = readers.at(-1);
  if (reader === undefined) return Promise.resolve(undefined);
  const nowMs = Date.now();
  if (lastRead === undefined || nowMs - lastRead.atMs > READ_REUSE_MS) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolveTimeout) => {
      timer = setTimeout(() => resolveTimeout(undefined), READ_TIMEOUT_MS);
    });
    const read = reader().catch(() => undefined);
    lastRead = { atMs: nowMs, statuses: Promise.race([read, timeout]).finally(() => clearTimeout(timer)) };
  }
  return lastRead.statuses;
}

/** Collected on scrape from the checkpoints and the head of the log (projection-status.ts), so every process reports every projection. */
new client.Gauge({
  name: 'ivl_projection_lag_events',
  help: "Events of the projection's categories after its checkpoint (PostgreSQL event store only; capped at 1,000,000)",
  labelNames: ['projection'] as const,
  async collect() {
    this.reset();
    for (const status of (await currentStatuses()) ?? []) if (status.lagEvents !== null) this.set({ projection: status.name }, status.lagEvents);
  },
});

new client.Gauge({
  name: 'ivl_projection_lag_seconds',
  help: 'Age of the oldest event the projection has not applied yet; 0 when caught up',
  labelNames: ['projection'] as const,
  async collect() {
    this.reset();
    for (const status of (await currentStatuses()) ?? []) this.set({ projection: status.name }, status.lagSeconds);
  },
});

new client.Gauge({
  name: 'ivl_projection_stopped',
  help: '1 when the projection stopped at an event it could not apply (see GET /admin/v1/projections), else 0',
  labelNames: ['projection'] as const,
  async collect() {
    this.reset();
    for (const status of (await currentStatuses()) ?? []) this.set({ projection: status.name }, status.state === 'stopped' ? 1 : 0);
  },
});

/** Plugs this app's pool and event store into the projection lag gauges. */
@Injectable()
export class ProjectionLagMetrics implements OnModuleInit, OnApplicationShutdown {
  private readonly reader: StatusReader;

  constructor(@Inject(PG_POOL) pool: pg.Pool, @Inject(EVENT_STORE) store: EventStore) {
    this.reader = () => readProjectionStatus(pool, store, PROJECTIONS);
  }

  onModuleInit(): void {
    readers.push(this.reader);
  }

  onApplicationShutdown(): void {
    const index = readers.indexOf(this.reader);
    if (index !== -1) readers.splice(index, 1);
    lastRead = undefined;
  }
}
