import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { createPool } from '../database/pool.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { describeOnProject } from '../../test/support/store-independent.js';
import { PKCS11_SOURCE, testToken } from '../../test/support/softhsm.js';
import { DataKeys, DEFAULT_CACHE_LIMITS } from './data-keys.js';
import { KeyManagement, LocalKeyManagement } from './key-management.port.js';
import { Pkcs11KeyManagement } from './pkcs11-key-management.js';
import { rotateMaster } from './rotate-master.js';
import { open, seal } from './sealing.js';
import { createHmac } from 'node:crypto';

const reference = (n: number) => `vrf_KV${String(n).padStart(24, '0')}`;

/** Each adapter: the local master key, and the PKCS#11 token when there is one (a skip that says why otherwise). */
const adapters: [string, () => KeyManagement][] = [['the local master key', () => new LocalKeyManagement(randomBytes(32))]];
if (PKCS11_SOURCE.kind !== 'none') adapters.push(['the PKCS#11 token', () => Pkcs11KeyManagement.open(testToken().config)]);
else console.warn(`SKIPPED: organization key versions on the PKCS#11 adapter: ${PKCS11_SOURCE.reason}`);

for (const [name, makeKms] of adapters)
  describeOnProject('postgres', `Versions of an organization's key-encryption key, under ${name}`, "the key tables are PostgreSQL's whichever store holds the log", () => {
    let database: TestDatabase;
    let pool: pg.Pool;
    let kms: KeyManagement;

    beforeAll(async () => {
      database = await createTestDatabase();
      pool = createPool(database.url, 4);
      kms = makeKms();
    });

    afterAll(async () => {
      if (kms instanceof Pkcs11KeyManagement) kms.close();
      await pool?.end();
      await database?.drop();
    });

    const versionRow = async (organizationId: string) =>
      (await pool.query<{ kek_version: number; kek_wraps: string }>('select kek_version, kek_wraps from organization_keys where organization_id = $1', [organizationId])).rows[0];
    const retired = async (organizationId: string) =>
      (
        await pool.query<{ version: number; wraps: string }>('select version, wraps from organization_kek_versions where organization_id = $1 order by version', [organizationId])
      ).rows.map((row) => ({ version: row.version, wraps: Number(row.wraps) }));
    const wrappedKey = async (ref: string) =>
      (await pool.query<{ wrapped_key: string }>('select wrapped_key from verification_keys where reference = $1', [ref])).rows[0].wrapped_key;

    it('makes a new version once the current one has wrapped the configured number of keys; every data key and sealed value still opens', async () => {
      const keys = new DataKeys(pool, kms, DEFAULT_CACHE_LIMITS, { maxWrapsPerKek: 3 });
      const organizationId = `org_kv_${randomBytes(3).toString('hex')}`;
      const made: Buffer[] = [];
      const [secret] = await keys.sealForOrganization(organizationId, [{ plain: Buffer.from('endpoint secret'), context: 'endpoint' }]);
      made.push(await keys.create(organizationId, 'test', reference(1)));
      expect(await versionRow(organizationId)).toEqual({ kek_version: 1, kek_wraps: '2' });
      made.push(await keys.create(organizationId, 'test', reference(2)));
      // The third wrap reached 3: version 2 replaced version 1, which is kept with its count.
      expect(await versionRow(organizationId)).toEqual({ kek_version: 2, kek_wraps: '0' });
      expect(await retired(organizationId)).toEqual([{ version: 1, wraps: 3 }]);
      made.push(await keys.create(organizationId, 'live', reference(3)));
      expect(await wrappedKey(reference(2))).not.toMatch(/^v\d+:/);
      expect(await wrappedKey(reference(3))).toMatch(/^v2:/);
      expect(await versionRow(organizationId)).toEqual({ kek_version: 2, kek_wraps: '1' });

      // Another process (no cache) opens keys of both versions, and the value sealed under version 1.
      const reader = new DataKeys(pool, kms);
      for (const [index, key] of made.entries()) expect(await reader.get(reference(index + 1))).toEqual({ status: 'open', key });
      expect((await reader.openForOrganization(organizationId, [{ sealed: secret, context: 'endpoint' }]))[0].toString()).toBe('endpoint secret');
      const [secret2] = await reader.sealForOrganization(organizationId, [{ plain: Buffer.from('second'), context: 'endpoint' }]);
      expect(secret2).toMatch(/^v2:/);
      expect((await keys.openForOrganization(organizationId, [{ sealed: secret2, context: 'endpoint' }]))[0].toString()).toBe('second');
    });

    it('rotates on demand, moves every version with a master-key rotation, and destroys every version at offboarding', async () => {
      const keys = new DataKeys(pool, kms);
      const organizationId = `org_kv_${randomBytes(3).toString('hex')}`;
      const binding = { reference: reference(10), eventType: 'VerificationCompleted', field: 'result' };
      const first = await keys.create(organizationId, 'test', binding.reference);
      const sealed = seal(first, { lastName: 'Okafor' }, binding);
      expect(await keys.rotateOrganizationKey(organizationId)).toEqual({ version: 2, rotated: true });
      // Only when still at the version the caller saw: two processes at the limit make one version.
      expect(await keys.rotateOrganizationKey(organizationId, 1)).toEqual({ version: 2, rotated: false });
      expect(await keys.rotateOrganizationKey(organizationId)).toEqual({ version: 3, rotated: true });
      const third = await keys.create(organizationId, 'test', reference(11));
      expect(await wrappedKey(reference(11))).toMatch(/^v3:/);

      // A master key rotation re-wraps the current version and the two kept.
      const next = kms instanceof Pkcs11KeyManagement ? kms : new LocalKeyManagement(randomBytes(32));
      if (kms instanceof Pkcs11KeyManagement) kms.rotate();
      const report = await rotateMaster(pool, kms, next);
      expect(report.retiredOrganizationKeys.rewrapped).toBeGreaterThanOrEqual(2);
      const { rows } = await pool.query<{ master_key_id: string }>('select master_key_id from organization_kek_versions where organization_id = $1', [organizationId]);
      expect(rows.map((row) => row.master_key_id)).toEqual([next.masterKeyId, next.masterKeyId]);
      const after = new DataKeys(pool, next);
      const opened = await after.get(binding.reference);
      expect(opened.status).toBe('open');
      expect(open((opened as { key: Buffer }).key, sealed, binding)).toEqual({ lastName: 'Okafor' });
      expect(await after.get(reference(11))).toEqual({ status: 'open', key: third });

      await after.destroyOrganization(organizationId, new Date());
      expect(await retired(organizationId)).toEqual([]);
      expect((await new DataKeys(pool, next).get(binding.reference)).status).toBe('destroyed');
    });

    it('keeps an index key being retired through a rotation of the KEK and of the master key: lookups give the same two tokens', async () => {
      const keys = new DataKeys(pool, kms);
      const organizationId = `org_kv_${randomBytes(3).toString('hex')}`;
      const token = (indexKey: Buffer) => createHmac('sha256', indexKey).update('nin\n12345678905').digest('base64url');
      await keys.create(organizationId, 'test', reference(20));
      const [before] = await keys.subjectTokens(organizationId, token);
      expect(await keys.rotateIndexKey(organizationId, new Date())).toEqual({ version: 2, started: true });
      const during = await keys.subjectTokens(organizationId, token);
      expect(during).toEqual([expect.stringMatching(/^v2:/), before]);
      await keys.rotateOrganizationKey(organizationId);
      // The tests above left rows under master keys this one does not hold: only this organization's are rotated here.
      await pool.query('delete from organization_keys where organization_id <> $1', [organizationId]);
      await pool.query('delete from organization_kek_versions where organization_id <> $1', [organizationId]);
      const next = kms instanceof Pkcs11KeyManagement ? kms : new LocalKeyManagement(randomBytes(32));
      if (kms instanceof Pkcs11KeyManagement) kms.rotate();
      await rotateMaster(pool, kms, next);
      expect(await new DataKeys(pool, next).subjectTokens(organizationId, token)).toEqual(during);
    });
  });
