import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestEventStore, type TestEventStore } from '../support/event-store.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { DIST } from '../support/processes.js';

const run = promisify(execFile);
// The global setup built dist/ from the current sources.
const CLI = DIST.projections;

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npm run projections:*` as an engineer runs it, stderr not a terminal. */
describe('projections CLI', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let events: TestEventStore;
  let dataDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    events = await createTestEventStore(database, pool);
    dataDir = await mkdtemp(join(tmpdir(), 'ledger-projections-cli-'));
  });
  afterAll(async () => {
    await events?.close();
    await pool?.end();
    await database?.drop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  async function cli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, DATA_DIR: dataDir, ...env }, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      if (typeof failed.code !== 'number') throw error;
      return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  }
  const unreachable = { DATABASE_URL: 'postgres://ledger:secret@127.0.0.1:1/ledger', DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY };

  it('reports a failure as one readable line with the exit code, not a JSON log line with a stack trace', async () => {
    const failed = await cli(unreachable, 'status');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^error: [a-z_]+: .+ \(exit 1(; --verbose for the stack trace)?\)$/)]);
    expect(failed.stderr).not.toContain('{');
    expect(failed.stderr).not.toContain('secret');
  });

  it('adds the stack trace with --verbose', async () => {
    const failed = await cli(unreachable, 'status', '--verbose');
    expect(failed.code).toBe(1);
    const [first, ...rest] = failed.stderr.trimEnd().split('\n');
    expect(first).toMatch(/^error: [a-z_]+: .+ \(exit 1/);
    expect(rest.join('\n')).toMatch(/\n {4}at /);
  });

  it('names a configuration error and a usage error the same way, with their exit codes', async () => {
    expect(await cli({ EVENT_STORE: 'nope' }, 'status')).toMatchObject({
      code: 78,
      stderr: expect.stringMatching(/^error: config: .*EVENT_STORE must be one of .* \(exit 78\)\n$/),
    });
    expect(await cli(unreachable, 'rebuild', 'nope')).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: usage: unknown projection "nope" \(known: .*\) \(exit 1\)\n$/),
    });
  });

  it('draws the rebuild progress with the projection name, not a {name} placeholder', async () => {
    const rebuilt = await cli({ ...events.env, DATABASE_URL: database.url, DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY }, 'rebuild', 'organizations', 'api-keys');
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toMatch(/^organizations: swapped in; /m);
    expect(rebuilt.stderr).not.toContain('{name}');
    expect(rebuilt.stderr).toMatch(/^organizations +\[/m);
    expect(rebuilt.stderr).toMatch(/^api-keys +\[/m);
  });
});
