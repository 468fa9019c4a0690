import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import type * as Pkcs11Types from 'pkcs11js';
import type pg from 'pg';
import { createPool } from '../database/pool.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { describeWithPkcs11, testToken, type TestToken } from '../../test/support/softhsm.js';
import { testEventStoreKind } from '../../test/support/event-store.js';
import { DataKeys } from './data-keys.js';
import { Pkcs11KeyManagement } from './pkcs11-key-management.js';
import { rotateMaster } from './rotate-master.js';
import { open, seal } from './sealing.js';

/** The token's AES keys under the test's label, as another process reads them with pkcs11js. */
function inspectToken(token: TestToken): unknown {
  const script = `
    const p = require('pkcs11js'); const m = new p.PKCS11(); m.load(process.env.KMS_PKCS11_MODULE); m.C_Initialize();
    const slot = m.C_GetSlotList(true).find((s) => m.C_GetTokenInfo(s).label.trim() === process.env.KMS_PKCS11_TOKEN_LABEL);
    const session = m.C_OpenSession(slot, p.CKF_SERIAL_SESSION); m.C_Login(session, p.CKU_USER, process.env.KMS_PKCS11_PIN);
    m.C_FindObjectsInit(session, [{ type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }]); const found = m.C_FindObjects(session, 100); m.C_FindObjectsFinal(session);
    const out = found.map((h) => {
      const [label, sensitive, extractable] = m.C_GetAttributeValue(session, h, [{ type: p.CKA_LABEL }, { type: p.CKA_SENSITIVE }, { type: p.CKA_EXTRACTABLE }]);
      let value = 'read';
      try { m.C_GetAttributeValue(session, h, [{ type: p.CKA_VALUE }]); } catch { value = 'refused'; }
      return { label: label.value.toString(), sensitive: sensitive.value[0] === 1, extractable: extractable.value[0] === 1, value };
    }).filter((k) => k.label.startsWith(process.env.KMS_PKCS11_KEY_LABEL + '.'));
    m.C_Finalize(); process.stdout.write(JSON.stringify(out));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, ...token.env }, encoding: 'utf8' }));
}

const reference = (n: number) => `vrf_P11${String(n).padStart(23, '0')}`;

/** The master key in a SoftHSM2 token (store-independent: PostgreSQL holds the key tables either way). */
const describeHere =
  testEventStoreKind() === 'postgres'
    ? describeWithPkcs11
    : (title: string, suite: () => void) => describe.skip(`${title} [skipped on integration-esdb: store-independent]`, suite);

describeHere('The PKCS#11 key management (SoftHSM2)', () => {
  let token: TestToken;
  let database: TestDatabase;
  let pool: pg.Pool;
  const opened: Pkcs11KeyManagement[] = [];
  const openKms = (refreshMs?: number) => {
    const kms = Pkcs11KeyManagement.open(refreshMs === undefined ? token.config : { ...token.config, refreshMs });
    opened.push(kms);
    return kms;
  };

  const masterKeyOf = async (organizationId: string) =>
    (await pool.query<{ master_key_id: string }>('select master_key_id from organization_keys where organization_id = $1', [organizationId])).rows[0]?.master_key_id;

  beforeAll(async () => {
    token = testToken();
    database = await createTestDatabase();
    pool = createPool(database.url, 4);
  });

  afterAll(async () => {
    for (const kms of opened) kms.close();
    await pool?.end();
    await database?.drop();
  });

  it('wraps in the token (version 1 made at first open), bound to the context, and a second process opens it with the same key', async () => {
    const kms = openKms();
    expect(kms.masterKeyId).toMatch(new RegExp(`^pkcs11:${token.config.keyLabel}\\.1:[0-9a-f]{32}$`));
    const plain = Buffer.alloc(32, 7);
    const wrapped = await kms.wrap(plain, 'kek\norg_a');
    expect(wrapped).toMatch(/^p11:1:[0-9a-f]{32}:/);
    expect(Buffer.from(wrapped.split(':')[3], 'base64').includes(plain)).toBe(false);
    expect(await kms.unwrap(wrapped, 'kek\norg_a')).toEqual(plain);
    await expect(kms.unwrap(wrapped, 'kek\norg_b')).rejects.toThrow();
    // Two wraps of one key differ (a fresh IV each).
    expect(await kms.wrap(plain, 'kek\norg_a')).not.toBe(wrapped);
    // The key is the token's: another process sees it there, sensitive and not extractable, and cannot read its value.
    expect(inspectToken(token)).toEqual([{ label: `${token.config.keyLabel}.1`, sensitive: true, extractable: false, value: 'refused' }]);
    expect(await kms.derive('purpose a')).toEqual(await openKms().derive('purpose a'));
    expect(await kms.derive('purpose a')).not.toEqual(await kms.derive('purpose b'));
  });

  it('rotates to a new version: new wraps use it, older versions still unwrap, and another instance follows without reopening', async () => {
    const writer = openKms(100);
    const other = openKms(100);
    const before = writer.masterKeyId;
    const old = await writer.wrap(Buffer.alloc(32, 1), 'ctx');
    const newId = writer.rotate();
    expect(newId).toMatch(new RegExp(`^pkcs11:${token.config.keyLabel}\\.2:`));
    expect(writer.masterKeyId).toBe(newId);
    expect(writer.versionIds()).toEqual([before, newId]);
    expect(await writer.unwrap(old, 'ctx')).toEqual(Buffer.alloc(32, 1));
    // The other instance opens a value wrapped under the new version (it finds it in the token) ...
    const fresh = await writer.wrap(Buffer.alloc(32, 2), 'ctx');
    expect(await other.unwrap(fresh, 'ctx')).toEqual(Buffer.alloc(32, 2));
    expect(other.masterKeyId).toBe(newId);
    expect(other.canUnwrap(before) && other.canUnwrap(newId)).toBe(true);
    expect(other.canUnwrap('local:0123456789abcdef')).toBe(false);
  });

  it('opens a new session and carries on when the token drops its sessions (an HSM restart)', async () => {
    const kms = openKms();
    const wrapped = await kms.wrap(Buffer.alloc(32, 9), 'ctx');
    // Another handle on the same library in this process closes every session of the token, as a
    // token that restarted or a network HSM that lost its connection would.
    const lib = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11Types;
    const other = new lib.PKCS11();
    other.load(token.config.module);
    const slot = other.C_GetSlotList(true).find((candidate) => other.C_GetTokenInfo(candidate).label.trim() === token.config.tokenLabel)!;
    other.C_CloseAllSessions(slot);
    expect(await kms.unwrap(wrapped, 'ctx')).toEqual(Buffer.alloc(32, 9));
    other.C_CloseAllSessions(slot);
    expect(await kms.unwrap(await kms.wrap(Buffer.alloc(32, 8), 'ctx'), 'ctx')).toEqual(Buffer.alloc(32, 8));
  });

  it('keeps the key hierarchy working through DataKeys and a rotation of every organization key, and after reopening', async () => {
    const kms = openKms();
    const keys = new DataKeys(pool, kms);
    const binding = { reference: reference(1), eventType: 'VerificationCompleted', field: 'result' };
    const dataKey = await keys.create('org_p11_a', 'test', binding.reference);
    const sealed = seal(dataKey, { firstName: 'Chiamaka' }, binding);
    const { rows: before } = await pool.query<{ master_key_id: string; wrapped_kek: string }>(
      "select master_key_id, wrapped_kek from organization_keys where organization_id = 'org_p11_a'",
    );
    expect(before[0].master_key_id).toBe(kms.masterKeyId);

    const from = kms.masterKeyId;
    const stale = openKms(3_600_000);
    kms.rotate();
    const report = await rotateMaster(pool, kms, kms);
    expect(report).toMatchObject({ rewrapped: 1, alreadyRotated: 0 });
    const { rows: after } = await pool.query<{ master_key_id: string; wrapped_kek: string }>(
      "select master_key_id, wrapped_kek from organization_keys where organization_id = 'org_p11_a'",
    );
    expect(after[0].master_key_id).toBe(kms.masterKeyId);
    expect(after[0].master_key_id).not.toBe(from);
    expect(after[0].wrapped_kek).not.toBe(before[0].wrapped_kek);

    // A straggler: an instance that has not yet seen the new version (its refresh interval not
    // over) makes an organization's keys under the old one. They open everywhere, and a rotation
    // with no new version (`--rewrap-only`) moves them to the newest.
    expect(stale.masterKeyId).toBe(from);
    const stragglerKey = await new DataKeys(pool, stale).create('org_p11_b', 'test', reference(2));
    expect(await masterKeyOf('org_p11_b')).toBe(from);
    expect(await new DataKeys(pool, kms).get(reference(2))).toEqual({ status: 'open', key: stragglerKey });
    expect(await rotateMaster(pool, kms, kms)).toMatchObject({ rewrapped: 1, alreadyRotated: 1 });
    expect(await masterKeyOf('org_p11_b')).toBe(kms.masterKeyId);

    const reopened = new DataKeys(pool, openKms());
    const state = await reopened.get(binding.reference);
    expect(state.status).toBe('open');
    expect(open((state as { key: Buffer }).key, sealed, binding)).toEqual({ firstName: 'Chiamaka' });
  });
});
