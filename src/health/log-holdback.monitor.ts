import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import client from 'prom-client';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import type { LogHoldback } from '../event-store/postgres-log-holdback.js';

/** Held back at least this long, the log makes /health/ready answer `degraded` (a normal append holds it for milliseconds). */
export const HELD_BACK_DEGRADED_SECONDS = 5;
/** A read shared by the health check and the gauges of one scrape. */
const READ_REUSE_MS = 1_000;

/**
 * Watches the PostgreSQL log's visible bound (postgres-log-holdback.ts, through the store's log
 * reader) for /health/ready and the metrics. A store without a log reader (EventStoreDB) has no
 * such bound: it answers null.
 */
@Injectable()
export class LogHoldbackMonitor implements OnModuleInit, OnApplicationShutdown {
  private last: { atMs: number; read: Promise<LogHoldback | null> } | undefined;

  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  read(): Promise<LogHoldback | null> {
    const log = this.store.logReader;
    if (log === undefined) return Promise.resolve(null);
    const nowMs = Date.now();
    if (this.last === undefined || nowMs - this.last.atMs > READ_REUSE_MS) {
      const read = log.holdback();
      this.last = { atMs: nowMs, read };
      read.catch(() => {
        if (this.last?.read === read) this.last = undefined;
      });
    }
    return this.last.read;
  }

  onModuleInit(): void {
    monitors.push(this);
  }

  onApplicationShutdown(): void {
    const index = monitors.indexOf(this);
    if (index !== -1) monitors.splice(index, 1);
  }
}

/** The monitor the gauges read: one per process in production; with several apps in one test process, the latest started. */
const monitors: LogHoldbackMonitor[] = [];
const SCRAPE_TIMEOUT_MS = 2_000;

async function current(): Promise<LogHoldback | null> {
  const monitor = monitors.at(-1);
  if (monitor === undefined) return null;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolveTimeout) => {
    timer = setTimeout(() => resolveTimeout(null), SCRAPE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([monitor.read().catch(() => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

new client.Gauge({
  name: 'ivl_event_log_held_back_seconds',
  help: "How long committed events have waited behind the PostgreSQL log's visible bound (0: not held back; absent on EventStoreDB)",
  async collect() {
    this.reset();
    const holdback = await current();
    if (holdback !== null) this.set(holdback.heldBackSeconds);
  },
});

new client.Gauge({
  name: 'ivl_event_log_held_back_events',
  help: "Committed events not yet visible behind the PostgreSQL log's visible bound (counted up to 10,000)",
  async collect() {
    this.reset();
    const holdback = await current();
    if (holdback !== null) this.set(holdback.heldBackEvents);
  },
});

new client.Gauge({
  name: 'ivl_event_log_holder_transaction_seconds',
  help: 'While the PostgreSQL log is held back: how long the transaction holding it has been open, by kind (backend, prepared) and backend pid',
  labelNames: ['kind', 'pid'] as const,
  async collect() {
    this.reset();
    const holdback = await current();
    const holder = holdback?.holder;
    if (holdback === null || holdback === undefined || holdback.heldBackEvents === 0 || holder === null || holder === undefined) return;
    this.set({ kind: holder.kind, pid: holder.kind === 'backend' ? String(holder.pid) : '' }, holder.transactionSeconds ?? 0);
  },
});
