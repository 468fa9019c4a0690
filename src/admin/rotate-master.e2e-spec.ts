import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { DataKeys } from '../data-protection/data-keys.js';
import { LocalKeyManagement } from '../data-protection/key-management.port.js';
import { parseMasterKey } from '../data-protection/master-key.js';
import { open, seal } from '../data-protection/sealing.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../../test/support/data-protection.js';
import { allEvents, createTestEventStore, type TestEventStore } from '../../test/support/event-store.js';

const run = promisify(execFile);
const ROOT = resolve('.');

/** `npm run admin -- keys rotate-master`, built, against its own test database. */
describe('admin CLI: keys rotate-master', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let events: TestEventStore;
  let buildDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    events = await createTestEventStore(database, pool);
    buildDir = await mkdtemp(join(tmpdir(), 'ledger-rotate-'));
    for (const entry of ['src', 'projections', 'bench', '.swcrc', 'package.json', 'node_modules']) await symlink(join(ROOT, entry), join(buildDir, entry));
    await run(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: buildDir });
  });
  afterAll(async () => {
    await events?.close();
    await pool?.end();
    await database?.drop();
    if (buildDir !== undefined) await rm(buildDir, { recursive: true, force: true });
  });

  async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [join(buildDir, 'dist/src/admin/cli.js'), ...args], {
        cwd: buildDir,
        env: { PATH: process.env.PATH, ...events.env, DATABASE_URL: database.url, DATA_DIR: join(buildDir, '.data'), ...env },
        timeout: 30_000,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      if (typeof failed.code !== 'number') throw error;
      return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  }

  it('re-wraps every organization key under the new master key, touches no event, and changes nothing when run again', async () => {
    const old = new LocalKeyManagement(parseMasterKey(TEST_DATA_ENCRYPTION_KEY));
    const binding = { reference: 'vrf_ROTATE0000000000000000000', eventType: 'VerificationCompleted', field: 'result' };
    const dataKey = await new DataKeys(pool, old).create('org_rotate_a', 'test', binding.reference);
    await new DataKeys(pool, old).create('org_rotate_b', 'live', 'vrf_ROTATE0000000000000000001');
    const sealed = seal(dataKey, { firstName: 'Blessing' }, binding);
    const eventsBefore = (await allEvents(events.store)).length;

    const newKey = randomBytes(32).toString('base64');
    const keyFile = join(buildDir, 'new-master.key');
    await writeFile(keyFile, newKey, { mode: 0o600 });
    const missing = await cli({ DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY }, 'keys', 'rotate-master');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('NEW_DATA_ENCRYPTION_KEY');

    const rotated = await cli({ DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY }, '--json', 'keys', 'rotate-master', '--new-key-file', keyFile);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const next = new LocalKeyManagement(parseMasterKey(newKey));
    expect(JSON.parse(rotated.stdout)).toEqual({ masterKeyId: next.masterKeyId, rewrapped: 2, alreadyRotated: 0, destroyed: 0 });
    expect(rotated.stdout).not.toContain(newKey);

    const reopened = await new DataKeys(pool, next).get(binding.reference);
    expect(reopened.status).toBe('open');
    expect(open((reopened as { key: Buffer }).key, sealed, binding)).toEqual({ firstName: 'Blessing' });
    expect((await allEvents(events.store)).length).toBe(eventsBefore);

    // Run again (a repeated or resumed rotation), now configured with the new key: nothing to do.
    const again = await cli({ DATA_ENCRYPTION_KEY: newKey, NEW_DATA_ENCRYPTION_KEY: newKey }, '--json', 'keys', 'rotate-master');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rewrapped: 0, alreadyRotated: 2 });
  });
});
