import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { sandboxPortrait } from '../../src/providers/sandbox.provider.js';
import { SCOPES } from '../../src/scopes/scopes.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { allEvents } from '../support/event-store.js';
import { issueKey } from '../support/fixtures.js';

/**
 * Nothing personal in plain text at rest: every scope is run with inputs of two sandbox people,
 * then every column of every table of the database (the event log on the postgres store
 * included), every event the event store holds (on EventStoreDB, the test server's log as its
 * $all read serves it, byte for byte as appended) and every byte of the portrait store are
 * searched for every input, every value of every result and the portrait bytes.
 */

const BLESSING = { nin: '21440414976', bvn: '22126025250', phone: '08150292236', phone2: '08131346060', account: '7753968106', vin: '70C99262607B747FB36', vnin: 'YS79377970479239', passport: 'B43975538' };
const SEGUN = { nin: '57092406569', bvn: '22689713925', phone: '+2348150803816' };

const FACE_IMAGE = sandboxPortrait('plain-text-scan probe');

const CHECKS: readonly [string, Record<string, string>][] = [
  ['nin', { nin: BLESSING.nin }],
  ['nin', { nin: SEGUN.nin }],
  ['pnv', { phone: BLESSING.phone }],
  ['pnv', { phone: SEGUN.phone }],
  ['vnin', { vnin: BLESSING.vnin }],
  ['bvn', { bvn: BLESSING.bvn }],
  ['pvc', { vin: BLESSING.vin }],
  ['passport', { passport_number: BLESSING.passport }],
  ['bank_account', { account_number: BLESSING.account, bank: 'Wema Bank' }],
  ['premium_bank_account', { account_number: BLESSING.account }],
  ['phone', { phone: BLESSING.phone2 }],
  ['face_match', { image: FACE_IMAGE.toString('base64'), nin: BLESSING.nin }],
  ['face_match', { image: FACE_IMAGE.toString('base64'), bvn: SEGUN.bvn }],
];

/** Result fields that are not about the person (links minted per read, enumerations shared by everyone). */
const NOT_PERSONAL_FIELDS = new Set(['portraitUrl', 'portraitUrlExpiresAt', 'match', 'confidence', 'currency', 'accountStatus', 'accountType', 'network', 'bankCode', 'bankName', 'enrollmentBank', 'nationality', 'gender']);

/** Every string leaf of a value, with the field it sits under. */
function leaves(value: unknown, field = ''): { field: string; text: string }[] {
  if (typeof value === 'string') return [{ field, text: value }];
  if (Array.isArray(value)) return value.flatMap((item) => leaves(item, field));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, item]) => leaves(item, key));
  return [];
}

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe('No personal data in plain text at rest', () => {
  let app: TestApp;
  let key: string;
  const personal = new Set<string>();
  const portraits: Buffer[] = [FACE_IMAGE];
  const references: string[] = [];
  const organizationEmail = `scan-${Date.now()}@example.org`;
  /** A console sign-up's and its team's addresses: kept in clear in the console's tables (credentials), never in their events. */
  const consoleEmails = [uniqueEmail('scan-owner'), uniqueEmail('scan-member')];
  const CONSOLE_PASSWORDS = ['scan console password one', 'scan console password two'];

  beforeAll(async () => {
    app = await startTestApp();
    const created = await app.admin('POST', '/admin/v1/organizations', { name: 'Plain-text scan', email: organizationEmail });
    expect(created.status).toBe(201);
    const org = { id: created.body.data.id as string };
    expect((await app.admin('PUT', `/admin/v1/organizations/${org.id}/scopes`, { scopes: [...SCOPES] })).status).toBe(200);
    key = (await issueKey(app, org.id)).key;
    for (const [scope, body] of CHECKS) {
      const response = await app.request('POST', `/v1/${scope}`, { body, headers: { 'x-service-key': key } });
      expect(response.status).toBe(201);
      expect(response.body.data.status).toBe('found');
      references.push(response.body.data.reference as string);
      for (const { field, text } of [...leaves(body), ...leaves(response.body.data.request), ...leaves(response.body.data.result)]) {
        if (NOT_PERSONAL_FIELDS.has(field) || text.length < 5) continue;
        personal.add(text);
      }
      const portraitUrl = response.body.data.result.portraitUrl as string | undefined;
      if (portraitUrl !== undefined) {
        const download = await fetch(portraitUrl);
        expect(download.status).toBe(200);
        portraits.push(Buffer.from(await download.arrayBuffer()));
      }
    }
    // A console sign-up, an invitation and a password change: the passwords must be nowhere at all.
    const owner = new ConsoleClient(app);
    expect((await owner.signUp({ organizationName: 'Plain-text scan console', email: consoleEmails[0], password: CONSOLE_PASSWORDS[0] })).status).toBe(201);
    expect((await owner.call('POST', '/console/api/team/invitations', { email: consoleEmails[1], role: 'developer' })).status).toBe(201);
    expect((await owner.call('POST', '/console/api/password/change', { currentPassword: CONSOLE_PASSWORDS[0], newPassword: CONSOLE_PASSWORDS[1] })).status).toBe(200);
    for (const password of CONSOLE_PASSWORDS) personal.add(password);
    // The three forms of a phone number and the image digest count as the person's data too.
    for (const phone of [BLESSING.phone, SEGUN.phone]) {
      const local = phone.replace(/^\+234/, '0');
      personal.add(local).add(`234${local.slice(1)}`).add(`+234${local.slice(1)}`);
    }
    // A GET opens what the read model holds sealed: wait until the projection has every row.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const list = await app.request('GET', '/v1/verifications?pageSize=100', { headers: { 'x-service-key': key } });
      if (list.body.meta.total === CHECKS.length || Date.now() > deadline) break;
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
  });

  afterAll(async () => {
    await app?.close();
  });

  it('collected what it searches for: inputs, names, dates of birth, phones, emails, addresses, portraits', () => {
    const texts = [...personal];
    expect(texts).toEqual(expect.arrayContaining([BLESSING.nin, BLESSING.bvn, BLESSING.vin, BLESSING.passport, '2003-02-24', 'Blessing', 'Ibrahim', '1999-12-25']));
    expect(texts.some((text) => text.includes('@'))).toBe(true);
    expect(portraits.length).toBeGreaterThanOrEqual(3);
  });

  it('the full verification still shows it: GET opens the sealed fields', async () => {
    const list = await app.request('GET', '/v1/verifications?pageSize=100', { headers: { 'x-service-key': key } });
    expect(list.body.meta.total).toBe(CHECKS.length);
    for (const summary of list.body.data as { reference: string }[]) {
      expect(Object.keys(summary).sort()).toEqual(['charged', 'createdAt', 'priceKobo', 'reference', 'scope', 'status']);
      const full = await app.request('GET', `/v1/verifications/${summary.reference}`, { headers: { 'x-service-key': key } });
      expect(full.status).toBe(200);
      expect(full.body.data.personalDataErasedAt).toBeNull();
      expect(Object.keys(full.body.data.request).length).toBeGreaterThan(0);
    }
  });

  it('no column of any table holds any of it (the event log, read models, keys and index included)', async () => {
    const client = new pg.Client({ connectionString: app.database.url });
    await client.connect();
    try {
      const { rows: tables } = await client.query<{ schema: string; name: string }>(
        `select table_schema as schema, table_name as name from information_schema.tables
         where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
      );
      expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['verifications', 'verification_keys', 'organization_keys', 'verification_subjects']));
      const leaks: string[] = [];
      // The control: what is stored in clear (an organization's contact email, a reference) is found by the same search.
      const controls = new Set([organizationEmail, references[0]]);
      const found = new Set<string>();
      for (const table of tables) {
        const { rows } = await client.query<{ row: string }>(`select t::text as row from "${table.schema}"."${table.name}" t`);
        for (const { row } of rows) {
          for (const text of personal) if (row.includes(text)) leaks.push(`${table.name}: ${text.slice(0, 3)}…`);
          for (const text of controls) if (row.includes(text)) found.add(text);
        }
      }
      expect(leaks).toEqual([]);
      expect([...found].sort()).toEqual([...controls].sort());
    } finally {
      await client.end();
    }
  });

  it(`no event of the event store holds any of it`, async () => {
    const events = await allEvents(app.eventStore);
    expect(events.some((event) => event.type === 'VerificationRequested')).toBe(true);
    const leaks: string[] = [];
    let controlFound = false;
    for (const event of events) {
      const stored = JSON.stringify([event.streamId, event.type, event.data, event.metadata]);
      for (const text of personal) if (stored.includes(text)) leaks.push(`${event.type}: ${text.slice(0, 3)}…`);
      if (stored.includes(organizationEmail)) controlFound = true;
    }
    expect(leaks).toEqual([]);
    expect(controlFound).toBe(true);
  });

  it("the console's account events hold no email of its users", async () => {
    const events = (await allEvents(app.eventStore)).filter((event) => event.streamId.startsWith('consoleUser-'));
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['ConsoleUserSignedUp', 'ConsoleInvitationSent', 'ConsolePasswordChanged']));
    const stored = events.map((event) => JSON.stringify([event.data, event.metadata])).join('\n').toLowerCase();
    expect(consoleEmails.filter((email) => stored.includes(email.toLowerCase()))).toEqual([]);
  });

  it('wallet events carry no personal data: every field is an id, a reference, an amount, a scope or a reason code', async () => {
    const SHAPES: Readonly<Record<string, (value: unknown) => boolean>> = {
      organizationId: (value) => typeof value === 'string' && /^org_[0-9A-Za-z]+$/.test(value),
      environment: (value) => value === 'test' || value === 'live',
      reference: (value) => typeof value === 'string' && /^vrf_[0-9A-HJKMNP-TV-Z]{26}$/.test(value),
      fundingReference: (value) => typeof value === 'string' && /^[A-Za-z0-9_:.-]{1,100}$/.test(value),
      amountKobo: (value) => Number.isSafeInteger(value),
      scope: (value) => (SCOPES as readonly unknown[]).includes(value),
      reason: (value) => typeof value === 'string' && /^[a-z_]{1,64}$/.test(value),
      schemaVersion: (value) => Number.isSafeInteger(value),
    };
    const wallet = (await allEvents(app.eventStore)).filter((event) => event.streamId.startsWith('wallet-'));
    expect(new Set(wallet.map((event) => event.type))).toEqual(new Set(['WalletFunded', 'WalletFundsReserved', 'WalletDebited']));
    const misfits = wallet.flatMap((event) =>
      Object.entries(event.data)
        .filter(([field, value]) => SHAPES[field] === undefined || !SHAPES[field](value))
        .map(([field]) => `${event.type}.${field}`),
    );
    expect(misfits).toEqual([]);
  });

  it('no file of the portrait store holds a portrait byte sequence', async () => {
    const files = await filesUnder(app.runtime.config.portraits.directory);
    expect(files.length).toBeGreaterThan(0);
    const leaks: string[] = [];
    for (const file of files) {
      const bytes = await readFile(file);
      for (const portrait of portraits) {
        // Any 32-byte window of the image (its header, its middle, its end).
        for (const start of [0, Math.floor(portrait.length / 2) - 16, portrait.length - 32]) {
          if (bytes.includes(portrait.subarray(start, start + 32))) leaks.push(`${file} @${start}`);
        }
      }
      for (const text of personal) if (bytes.includes(Buffer.from(text, 'utf8'))) leaks.push(`${file}: ${text.slice(0, 3)}…`);
    }
    expect(leaks).toEqual([]);
  });
});
