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
 * Nothing personal in plain text at rest: every scope is run with inputs of two sandbox people (one
 * with a NIN in its X-Request-Id), the console is used (sign-ups, an invitation, a password change
 * and reset, failed sign-ins, a sign-in from a client address and browser of its own), a webhook
 * endpoint is added, a check erased and an organization offboarded; then every column of every
 * table of the database (enumerated from information_schema, the event log on the postgres store
 * included), every event of every type the event store holds (on EventStoreDB, the test server's
 * log as its $all read serves it, byte for byte as appended), every line the service logged and
 * every file under DATA_DIR are searched for every input, every value of every result, every
 * console email, client address and user agent, and the portrait bytes.
 */

const BLESSING = {
  nin: '21440414976',
  bvn: '22126025250',
  phone: '08150292236',
  phone2: '08131346060',
  account: '7753968106',
  vin: '70C99262607B747FB36',
  vnin: 'YS79377970479239',
  passport: 'B43975538',
};
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
const NOT_PERSONAL_FIELDS = new Set([
  'portraitUrl',
  'portraitUrlExpiresAt',
  'match',
  'confidence',
  'currency',
  'accountStatus',
  'accountType',
  'network',
  'bankCode',
  'bankName',
  'enrollmentBank',
  'nationality',
  'gender',
]);

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
  const organizationEmail = `Scan-${Date.now()}@Example.org`;
  /** A console sign-up's, its team's and an offboarded organization's owner's addresses. */
  const consoleEmails = [uniqueEmail('Scan-Owner'), uniqueEmail('scan-member'), uniqueEmail('scan-offboarded'), uniqueEmail('scan-nobody')];
  const CONSOLE_PASSWORDS = ['scan console password one', 'scan console password two', 'scan console password three'];
  /** A console user's browser and client address (through a trusted proxy's X-Forwarded-For). */
  const USER_AGENT = 'ScanBrowser/9.9 (uaprobe-4471)';
  const CLIENT_ADDRESS = '198.51.100.73';
  const WEBHOOK_URL = 'https://hooks.example.net/scanprobe-endpoint-path';
  const logLines: string[] = [];
  let offboardedId = '';

  beforeAll(async () => {
    app = await startTestApp({
      env: { LOG_LEVEL: 'debug', TRUST_PROXY: '127.0.0.1' },
      logDestination: { write: (line: string) => void logLines.push(line) },
    });
    const created = await app.admin('POST', '/admin/v1/organizations', { name: 'Plain-text scan', email: organizationEmail });
    expect(created.status).toBe(201);
    const org = { id: created.body.data.id as string };
    expect((await app.admin('PUT', `/admin/v1/organizations/${org.id}/scopes`, { scopes: [...SCOPES] })).status).toBe(200);
    key = (await issueKey(app, org.id)).key;
    for (const [scope, body] of CHECKS) {
      // The caller may put anything in X-Request-Id: here, the person's NIN.
      const response = await app.request('POST', `/v1/${scope}`, { body, headers: { 'x-service-key': key, 'x-request-id': `scan-${BLESSING.nin}-${references.length}` } });
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
    // A console sign-up, an invitation, a password change and reset, failed sign-ins (a known and an
    // unknown address) and a sign-in from a browser and address of its own: the passwords must be
    // nowhere at all, the emails, the address and the browser nowhere in clear.
    const browser = { 'user-agent': USER_AGENT, 'x-forwarded-for': CLIENT_ADDRESS };
    const owner = new ConsoleClient(app);
    expect((await owner.signUpAndSignIn({ organizationName: 'Plain-text scan console', email: consoleEmails[0], password: CONSOLE_PASSWORDS[0] })).status).toBe(200);
    expect((await owner.call('POST', '/console/api/team/invitations', { email: consoleEmails[1], role: 'developer' })).status).toBe(201);
    expect((await owner.call('POST', '/console/api/password/change', { currentPassword: CONSOLE_PASSWORDS[0], newPassword: CONSOLE_PASSWORDS[1] })).status).toBe(200);
    const endpoint = await owner.call('POST', '/console/api/webhooks/endpoints', { url: WEBHOOK_URL, eventTypes: ['verification.completed'] });
    expect(endpoint.status).toBe(201);
    const visitor = new ConsoleClient(app);
    expect((await visitor.call('POST', '/console/api/login', { email: consoleEmails[0], password: 'not the password at all' }, { headers: browser })).status).toBe(401);
    expect((await visitor.call('POST', '/console/api/login', { email: consoleEmails[3], password: 'not the password at all' }, { headers: browser })).status).toBe(401);
    expect((await visitor.call('POST', '/console/api/password/forgot', { email: consoleEmails[0] }, { headers: browser })).status).toBe(202);
    expect((await visitor.call('POST', '/console/api/password/forgot', { email: consoleEmails[3] }, { headers: browser })).status).toBe(202);
    const signedIn = await visitor.call('POST', '/console/api/login', { email: consoleEmails[0].toUpperCase(), password: CONSOLE_PASSWORDS[1] }, { headers: browser });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.user.email).toBe(consoleEmails[0]);
    // The sign-in and the team list still show the addresses: opened from what is stored sealed.
    const team = await owner.call('GET', '/console/api/team');
    expect(team.status).toBe(200);
    expect(team.body.data.members.map((member: { email: string }) => member.email)).toEqual([consoleEmails[0]]);
    expect(team.body.data.invitations.map((invitation: { email: string }) => invitation.email)).toEqual([consoleEmails[1]]);
    const listed = await app.admin('GET', `/admin/v1/organizations/${org.id}`);
    expect(listed.body.data.email).toBe(organizationEmail);
    // An erasure.
    const erased = await app.request('POST', `/v1/verifications/${references[0]}/erasure`, { headers: { 'x-service-key': key } });
    expect(erased.status).toBe(200);
    // An offboarded organization: signed up from the console, then its personal data destroyed.
    const leaving = new ConsoleClient(app);
    const left = await leaving.signUpAndSignIn({ organizationName: 'Plain-text scan offboarded', email: consoleEmails[2], password: CONSOLE_PASSWORDS[2] });
    expect(left.status).toBe(200);
    offboardedId = left.body.data.organization.id as string;
    expect((await app.admin('DELETE', `/admin/v1/organizations/${offboardedId}/personal-data?confirm=${offboardedId}`)).status).toBe(200);
    for (const password of CONSOLE_PASSWORDS) personal.add(password);
    for (const email of [organizationEmail, ...consoleEmails]) personal.add(email).add(email.toLowerCase());
    personal.add(USER_AGENT).add('uaprobe-4471').add(CLIENT_ADDRESS).add(WEBHOOK_URL).add('scanprobe-endpoint-path');
    // The three forms of a phone number and the image digest count as the person's data too.
    for (const phone of [BLESSING.phone, SEGUN.phone]) {
      const local = phone.replace(/^\+234/, '0');
      personal
        .add(local)
        .add(`234${local.slice(1)}`)
        .add(`+234${local.slice(1)}`);
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
      // The first was erased.
      if (summary.reference === references[0]) continue;
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
      // The control: what is stored in clear (a reference, an organization's name) is found by the same search.
      const controls = new Set([references[1], 'Plain-text scan console']);
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

  it('no event of any type in the event store holds any of it', async () => {
    const events = await allEvents(app.eventStore);
    const types = new Set(events.map((event) => event.type));
    for (const type of ['VerificationRequested', 'OrganizationRegistered', 'ConsoleUserSignedUp', 'ConsoleInvitationSent', 'ConsolePasswordChanged', 'PersonalDataDestroyed'])
      expect(types).toContain(type);
    const leaks: string[] = [];
    let controlFound = false;
    for (const event of events) {
      const stored = JSON.stringify([event.streamId, event.type, event.data, event.metadata]);
      for (const text of personal) if (stored.includes(text)) leaks.push(`${event.type}: ${text.slice(0, 3)}…`);
      if (stored.includes(references[1])) controlFound = true;
    }
    expect(leaks).toEqual([]);
    expect(controlFound).toBe(true);
  });

  it("the service's log lines hold none of it", () => {
    const log = logLines.join('');
    expect(log).toContain(references[1]);
    expect([...personal].filter((text) => log.includes(text)).map((text) => text.slice(0, 3))).toEqual([]);
  });

  it("the offboarded organization's contact data is gone: its email reads as erased", async () => {
    const shown = await app.admin('GET', `/admin/v1/organizations/${offboardedId}`);
    expect(shown.status).toBe(200);
    expect(shown.body.data.personalDataDestroyedAt).not.toBeNull();
    expect(shown.body.data.email).toBe('');
    // Its owner can no longer sign in: the account went with the organization's personal data.
    const client = new ConsoleClient(app);
    expect((await client.call('POST', '/console/api/login', { email: consoleEmails[2], password: CONSOLE_PASSWORDS[2] })).status).toBe(401);
  });

  it("the console's account events hold no email of its users", async () => {
    const events = (await allEvents(app.eventStore)).filter((event) => event.streamId.startsWith('consoleUser-'));
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['ConsoleUserSignedUp', 'ConsoleInvitationSent', 'ConsolePasswordChanged']));
    const stored = events
      .map((event) => JSON.stringify([event.data, event.metadata]))
      .join('\n')
      .toLowerCase();
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

  it('no file under DATA_DIR (the portrait store included) holds a portrait byte sequence or any of it', async () => {
    const files = await filesUnder(app.runtime.config.dataDir);
    expect(files.filter((file) => file.startsWith(app.runtime.config.portraits.directory)).length).toBeGreaterThan(0);
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
