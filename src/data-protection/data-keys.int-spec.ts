import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { createPool } from '../database/pool.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { blindToken, tokensOf } from './blind-index.js';
import { DataKeys, type StoredDataKey } from './data-keys.js';
import { LocalKeyManagement } from './key-management.port.js';
import { rotateMaster, UnknownMasterKey } from './rotate-master.js';
import { open, seal } from './sealing.js';

const reference = (n: number) => `vrf_TEST${String(n).padStart(22, '0')}`;

describe('The key hierarchy in PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  const master = new LocalKeyManagement(randomBytes(32));

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = createPool(database.url, 4);
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it('writes the keys and tokens of concurrent checks together (group commit), each answered as stored, the first of two keys for one reference kept', async () => {
    const keys = new DataKeys(pool, master);
    const statements: string[] = [];
    const counting = new Proxy(pool, {
      get: (target, property, receiver) =>
        property === 'query'
          ? (...args: Parameters<pg.Pool['query']>) => {
              const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
              if (text.includes('insert into verification_keys')) statements.push(text);
              return (target.query as (...a: unknown[]) => unknown).apply(target, args);
            }
          : Reflect.get(target, property, receiver),
    });
    const grouped = new DataKeys(counting, master);
    await grouped.indexKey('org_group');
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        grouped.create('org_group', 'test', reference(500 + n), (indexKey) => [blindToken(indexKey, 'nin', `2144041${String(n).padStart(4, '0')}`)]),
      ),
    );
    expect(statements.length).toBeLessThan(10);
    for (let n = 0; n < 40; n += 1) expect(await keys.get(reference(500 + n))).toEqual({ status: 'open', key: created[n] });
    const indexKey = await keys.indexKey('org_group');
    expect(await keys.referencesOf('org_group', 'test', [blindToken(indexKey, 'nin', '21440410007')], 10)).toEqual([reference(507)]);
    const twice = await Promise.all([
      grouped.create('org_group', 'test', reference(600)),
      grouped.create('org_group', 'test', reference(601)),
      grouped.create('org_group', 'test', reference(601)),
    ]);
    expect(twice[1].equals(twice[2])).toBe(true);
    expect(await keys.get(reference(601))).toEqual({ status: 'open', key: twice[1] });
  });

  it("stores a result's tokens written alone, with no other check's write to share a statement with", async () => {
    const keys = new DataKeys(pool, master);
    await keys.create('org_alone', 'test', reference(700), (indexKey) => [blindToken(indexKey, 'nin', '21440417000')]);
    await keys.index('org_alone', 'test', reference(700), (indexKey) => [blindToken(indexKey, 'phone', '08030000700')]);
    const indexKey = await keys.indexKey('org_alone');
    expect(await keys.referencesOf('org_alone', 'test', [blindToken(indexKey, 'phone', '08030000700')], 10)).toEqual([reference(700)]);
  });

  it('makes a data key per verification, stored only wrapped, and opens it again from a fresh process', async () => {
    const keys = new DataKeys(pool, master);
    const key = await keys.create('org_a', 'test', reference(1));
    expect(key).toHaveLength(32);
    const { rows } = await pool.query<{ wrapped_key: string }>('select wrapped_key from verification_keys where reference = $1', [reference(1)]);
    expect(Buffer.from(rows[0].wrapped_key, 'base64').includes(key)).toBe(false);
    const organization = await pool.query<{ wrapped_kek: string; master_key_id: string }>(
      "select wrapped_kek, master_key_id from organization_keys where organization_id = 'org_a'",
    );
    expect(organization.rows[0].master_key_id).toBe(master.masterKeyId);
    const fresh = new DataKeys(pool, master);
    expect(await fresh.get(reference(1))).toEqual({ status: 'open', key });
    expect(await fresh.get(reference(999))).toEqual({ status: 'missing' });
  });

  it('answers the stored key when asked twice for one reference', async () => {
    const keys = new DataKeys(pool, master);
    const first = await keys.create('org_a', 'test', reference(2));
    const again = await new DataKeys(pool, master).create('org_a', 'test', reference(2));
    expect(again).toEqual(first);
  });

  it('stores blind-index tokens with the key, never the identifier', async () => {
    const keys = new DataKeys(pool, master);
    await keys.create('org_b', 'live', reference(3), (indexKey) => tokensOf(indexKey, { phone: '+2348150292236' }));
    const indexKey = await keys.indexKey('org_b');
    const { rows } = await pool.query<{ token: string; environment: string }>('select token, environment from verification_subjects where reference = $1', [reference(3)]);
    expect(rows).toEqual([{ token: blindToken(indexKey, 'phone', '08150292236'), environment: 'live' }]);
    expect(JSON.stringify(rows)).not.toContain('8150292236');
  });

  it('reads a destroyed key as destroyed, with when (erasure), and a destroyed organization key likewise (offboarding)', async () => {
    const keys = new DataKeys(pool, master);
    await keys.create('org_c', 'test', reference(4));
    await keys.create('org_d', 'test', reference(5));
    await pool.query("update verification_keys set wrapped_key = null, destroyed_at = '2026-01-02T03:04:05Z' where reference = $1", [reference(4)]);
    await pool.query("update organization_keys set wrapped_kek = null, wrapped_index_key = null, destroyed_at = '2026-02-03T04:05:06Z' where organization_id = 'org_d'");
    const fresh = new DataKeys(pool, master);
    expect(await fresh.get(reference(4))).toEqual({ status: 'destroyed', destroyedAt: new Date('2026-01-02T03:04:05Z') });
    expect(await fresh.get(reference(5))).toEqual({ status: 'destroyed', destroyedAt: new Date('2026-02-03T04:05:06Z') });
  });

  it('keeps a destroyed key destroyed whatever order a read and the erasure interleave in, in this process and in another', async () => {
    const erasing = new DataKeys(pool, master);
    const elsewhere = new DataKeys(pool, master);
    await erasing.create('org_race', 'test', reference(800));
    // A read in this process took the key's row a moment before the erasure, and unwraps it after.
    const { rows: before } = await pool.query<StoredDataKey>('select organization_id, wrapped_key, destroyed_at from verification_keys where reference = $1', [reference(800)]);
    erasing.forget(reference(800));
    // Another process opened the key before the erasure too.
    expect(await elsewhere.get(reference(800))).toMatchObject({ status: 'open' });
    const destroyedAt = await erasing.destroy('org_race', reference(800), new Date('2026-03-04T05:06:07Z'));
    await erasing.stateOf(reference(800), before[0]);
    const { rows: after } = await pool.query<StoredDataKey>('select organization_id, wrapped_key, destroyed_at from verification_keys where reference = $1', [reference(800)]);
    for (const keys of [erasing, elsewhere]) {
      expect(await keys.get(reference(800))).toEqual({ status: 'destroyed', destroyedAt });
      expect(await keys.stateOf(reference(800), after[0])).toEqual({ status: 'destroyed', destroyedAt });
    }
  });

  it("wraps a new check's key under its organization's key even when the cached organization key expires meanwhile (controlled clock)", async () => {
    let now = 1_000_000;
    const keys = new DataKeys(pool, master, { maxEntries: 100, ttlMs: 60_000, now: () => now });
    await keys.indexKey('org_expiry');
    // The check takes the organization's keys from the cache; before it wraps its data key, the
    // cache entry expires under another caller.
    const making = keys.make('org_expiry', 'test', reference(900), (indexKey) => [blindToken(indexKey, 'nin', '21440419000')]);
    now += 60_000;
    const indexKey = await keys.indexKey('org_expiry');
    const made = await making;
    expect(indexKey.equals(Buffer.alloc(32))).toBe(false);
    expect(made.rows.tokens).toEqual([blindToken(indexKey, 'nin', '21440419000')]);
    await pool.query('insert into verification_keys (reference, organization_id, environment, wrapped_key) values ($1, $2, $3, $4)', [
      reference(900),
      'org_expiry',
      'test',
      made.rows.wrappedKey,
    ]);
    expect(await new DataKeys(pool, master).get(reference(900))).toEqual({ status: 'open', key: made.key });
  });

  it("binds a check's data key to its organization and its environment: moved to another of either, it does not open", async () => {
    const keys = new DataKeys(pool, master);
    const key = await keys.create('org_env', 'test', reference(950));
    const { rows } = await pool.query<StoredDataKey>('select organization_id, wrapped_key, destroyed_at from verification_keys where reference = $1', [reference(950)]);
    const stored = rows[0];
    expect(await new DataKeys(pool, master).stateOf(reference(950), { ...stored, environment: 'test' })).toEqual({ status: 'open', key });
    expect(await new DataKeys(pool, master).get(reference(950))).toEqual({ status: 'open', key });
    await new DataKeys(pool, master).indexKey('org_env_other');
    for (const moved of [
      { ...stored, environment: 'live' },
      { ...stored, organization_id: 'org_env_other', environment: 'test' },
    ]) {
      expect(await new DataKeys(pool, master).stateOf(reference(950), moved)).toEqual({ status: 'unopenable' });
    }
  });

  it('rotates the master key: every organization key re-wrapped in one go, every data key still opens, a second run changes nothing', async () => {
    const keys = new DataKeys(pool, master);
    const binding = { reference: reference(6), eventType: 'VerificationRequested', field: 'request' };
    const sealed = seal(await keys.create('org_e', 'test', reference(6)), { nin: '21440414976' }, binding);
    const before = await pool.query<{ organization_id: string; wrapped_kek: string | null }>('select organization_id, wrapped_kek from organization_keys order by 1');
    const next = new LocalKeyManagement(randomBytes(32));
    // A wallet-history checkpoint, MACed under a key derived from the old master key: dropped, to be rebuilt.
    await pool.query(
      `insert into wallet_history_checkpoints (stream_id, revision, entries, latest_occurred_at, state, mac) values ('wallet-org_e.test', 99, 100, now(), '{}', repeat('0', 64))`,
    );

    const report = await rotateMaster(pool, master, next);
    expect(report).toEqual({
      rewrapped: before.rows.filter((row) => row.wrapped_kek !== null).length,
      alreadyRotated: 0,
      destroyed: 1,
      retiredOrganizationKeys: { rewrapped: 0, alreadyRotated: 0 },
      totpSecrets: { rewrapped: 0, alreadyRotated: 0 },
      historyCheckpointsDropped: 1,
    });
    const after = await pool.query<{ organization_id: string; wrapped_kek: string | null; master_key_id: string }>(
      'select organization_id, wrapped_kek, master_key_id from organization_keys order by 1',
    );
    expect(after.rows.every((row) => row.master_key_id === next.masterKeyId)).toBe(true);
    expect(
      after.rows.filter((row) => row.wrapped_kek !== null).every((row, index) => row.wrapped_kek !== before.rows.filter((b) => b.wrapped_kek !== null)[index].wrapped_kek),
    ).toBe(true);

    const reopened = await new DataKeys(pool, next).get(reference(6));
    expect(reopened.status).toBe('open');
    expect(open((reopened as { key: Buffer }).key, sealed, binding)).toEqual({ nin: '21440414976' });
    expect(await new DataKeys(pool, next).get(reference(1))).toMatchObject({ status: 'open' });
    // The old master key no longer opens anything; a repeated (or resumed) run re-wraps nothing.
    await expect(new DataKeys(pool, master).get(reference(6))).rejects.toThrow(/rotate-master/);
    expect(await rotateMaster(pool, master, next)).toMatchObject({ rewrapped: 0, alreadyRotated: after.rows.length, destroyed: 0 });
    // A third key that wrapped nothing cannot take over rows it does not know.
    await expect(rotateMaster(pool, new LocalKeyManagement(randomBytes(32)), new LocalKeyManagement(randomBytes(32)))).rejects.toThrow(UnknownMasterKey);
  });
});
