import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataKeys } from '../data-protection/data-keys.js';
import { LocalKeyManagement } from '../data-protection/key-management.port.js';
import { parseMasterKey } from '../data-protection/master-key.js';
import { open, seal } from '../data-protection/sealing.js';
import { processTestBed } from '../../test/support/process-test-bed.js';
import { DIST, runNode } from '../../test/support/processes.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../../test/support/data-protection.js';
import { allEvents } from '../../test/support/event-store.js';

/** `npm run admin -- keys rotate-master`, built, against its own test database. */
describe('admin CLI: keys rotate-master', () => {
  const bed = processTestBed('ledger-rotate-');

  function cli(env: Record<string, string>, ...args: string[]) {
    return runNode(DIST.admin, args, {
      cwd: bed.dir,
      env: { PATH: process.env.PATH, ...bed.events.env, DATABASE_URL: bed.database.url, DATA_DIR: join(bed.dir, '.data'), ...env },
      timeoutMs: 30_000,
    });
  }

  it('re-wraps every organization key under the new master key, touches no event, and changes nothing when run again', async () => {
    const old = new LocalKeyManagement(parseMasterKey(TEST_DATA_ENCRYPTION_KEY));
    const binding = { reference: 'vrf_ROTATE0000000000000000000', eventType: 'VerificationCompleted', field: 'result' };
    const dataKey = await new DataKeys(bed.pool, old).create('org_rotate_a', 'test', binding.reference);
    await new DataKeys(bed.pool, old).create('org_rotate_b', 'live', 'vrf_ROTATE0000000000000000001');
    const sealed = seal(dataKey, { firstName: 'Blessing' }, binding);
    const eventsBefore = (await allEvents(bed.events.store)).length;

    const newKey = randomBytes(32).toString('base64');
    const keyFile = join(bed.dir, 'new-master.key');
    await writeFile(keyFile, newKey, { mode: 0o600 });
    const missing = await cli({ DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY }, 'keys', 'rotate-master');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('NEW_DATA_ENCRYPTION_KEY');

    const rotated = await cli({ DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY }, '--json', 'keys', 'rotate-master', '--new-key-file', keyFile);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const next = new LocalKeyManagement(parseMasterKey(newKey));
    expect(JSON.parse(rotated.stdout)).toEqual({
      masterKeyId: next.masterKeyId,
      rewrapped: 2,
      alreadyRotated: 0,
      destroyed: 0,
      retiredOrganizationKeys: { rewrapped: 0, alreadyRotated: 0 },
      totpSecrets: { rewrapped: 0, alreadyRotated: 0 },
      historyCheckpointsDropped: 0,
    });
    expect(rotated.stdout).not.toContain(newKey);

    const reopened = await new DataKeys(bed.pool, next).get(binding.reference);
    expect(reopened.status).toBe('open');
    expect(open((reopened as { key: Buffer }).key, sealed, binding)).toEqual({ firstName: 'Blessing' });
    expect((await allEvents(bed.events.store)).length).toBe(eventsBefore);

    // Run again (a repeated or resumed rotation), now configured with the new key: nothing to do.
    const again = await cli({ DATA_ENCRYPTION_KEY: newKey, NEW_DATA_ENCRYPTION_KEY: newKey }, '--json', 'keys', 'rotate-master');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rewrapped: 0, alreadyRotated: 2 });

    // A new version of one organization's key, on demand: the data key it wrapped before still opens.
    const orgRotated = await cli({ DATA_ENCRYPTION_KEY: newKey }, '--json', 'keys', 'rotate-org', 'org_rotate_a');
    expect(orgRotated.stderr).toBe('');
    expect(JSON.parse(orgRotated.stdout)).toEqual({ organizationId: 'org_rotate_a', version: 2 });
    const afterOrg = await new DataKeys(bed.pool, next).get(binding.reference);
    expect(open((afterOrg as { key: Buffer }).key, sealed, binding)).toEqual({ firstName: 'Blessing' });
    expect((await new DataKeys(bed.pool, next).create('org_rotate_a', 'test', 'vrf_ROTATE0000000000000000002')).length).toBe(32);
    expect((await bed.pool.query("select wrapped_key from verification_keys where reference = 'vrf_ROTATE0000000000000000002'")).rows[0].wrapped_key).toMatch(/^v2:/);
  });
});
