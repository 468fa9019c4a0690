import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const run = promisify(execFile);

/**
 * bench:projections at the smallest sizes it takes, every phase: a benchmark nobody can run is
 * found here rather than on the day its figures are wanted (its list phase once refused to start
 * the service for want of a mail setting). Only that it runs and prints each phase's row; its
 * figures at this size mean nothing.
 */
describe('bench:projections, a short run', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('runs every phase and prints its table', async () => {
    const { stdout } = await run(process.execPath, [resolve('dist/bench/projections.bench.js')], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: database.url,
        BENCH_EVENTS: '4000',
        BENCH_LIST_ROWS: '1000',
        BENCH_RUNS: '1',
        BENCH_RETENTION_CHECKS: '100',
        BENCH_RETENTION_CONNECTIONS: '10',
      },
      maxBuffer: 16 * 1024 * 1024,
      timeout: 300_000,
    });
    for (const row of ['| catch-up wallets', '| rebuild verifications alone', '| rebuild all read models at once', '| GET /v1/verifications page 1', '| retention sweep'])
      expect(stdout).toContain(row);
  }, 320_000);
});

/**
 * bench:api's POST phases at the smallest size, closed loop only: the check floor must write, per
 * check and table, the rows the service writes (the bench says so, or names the tables that
 * differ), or its ratio judges nothing. A subscriber the service runs and the floor did not (the
 * webhooks') once made it refuse the comparison.
 */
describe('bench:api, a short run', () => {
  it("runs the check floor on the service's own work and prints the POST rows", async () => {
    const { stdout } = await run(process.execPath, [resolve('dist/bench/api.bench.js')], {
      env: { PATH: process.env.PATH, BENCH_ONLY: 'post', BENCH_RUNS: '1', BENCH_SECONDS: '2', BENCH_WARMUP_SECONDS: '1', BENCH_PACED: '0' },
      maxBuffer: 16 * 1024 * 1024,
      timeout: 300_000,
    });
    expect(stdout).toContain('| POST /v1/nin (found), closed loop |');
    expect(stdout).toContain('the floor does the same work: yes');
  }, 320_000);
});
