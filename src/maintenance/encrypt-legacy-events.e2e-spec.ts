import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { IdGenerator } from '../common/ids.js';
import { toAppend } from '../common/event.js';
import { streams } from '../common/streams.js';
import { loadConfig } from '../config/config.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { isSealed, open } from '../data-protection/sealing.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import { FilePortraitStore } from '../portraits/portrait.store.js';
import { warnOfPlainPersonalData } from './plain-text-warning.js';
import type { VerificationEvent } from '../verifications/verification.events.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../../test/support/data-protection.js';
import { testEventStoreEnv } from '../../test/support/event-store.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';
import { DIST, exited, runNode, startNodeProcess } from '../../test/support/processes.js';
import { describeOnProject } from '../../test/support/store-independent.js';

const MAINTENANCE = resolve('dist/src/maintenance/cli.js');
const PORTRAIT_BYTES = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('legacy-portrait-pixels-Q7Z'.repeat(8))]);

/** Distinctive personal data, as the code before sealing wrote it in plain text. */
const PEOPLE = [
  { nin: '70931485512', firstName: 'Oluwafunmilayo', lastName: 'Legacyade', dateOfBirth: '1979-02-17', phoneNumber: '08039284711', address: '14 Okotie-Eboh Crescent' },
  { nin: '70931485523', firstName: 'Chukwuemekaike', lastName: 'Oldlogson', dateOfBirth: '1984-11-03', phoneNumber: '08123459087', address: '3 Bourdillon Rise' },
  { nin: '70931485534', firstName: 'Ngozichinyere', lastName: 'Plaintexta', dateOfBirth: '1991-07-29', phoneNumber: '07065512398', address: '88 Agodi Gate Road' },
];
const ERASED = { nin: '70931485545', firstName: 'Erasedbefore', lastName: 'Keyless', dateOfBirth: '1969-05-05', phoneNumber: '09011223344', address: '1 Gone Street' };
const NOT_FOUND_NIN = '70931485556';
const FAILED_NIN = '70931485567';
const PLAIN_STRINGS = [...PEOPLE, ERASED].flatMap((person) => Object.values(person)).concat(NOT_FOUND_NIN, FAILED_NIN);

interface EventSnapshot {
  position: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  metadata: JsonObject;
  created_at: Date;
  data: JsonObject;
}

describeOnProject(
  'postgres',
  'npm run maintenance -- encrypt-legacy-events on the PostgreSQL event log',
  'the command rewrites PostgreSQL rows; EventStoreDB is refused (below)',
  () => {
    let app: TestApp;
    let pool: pg.Pool;
    let dir: string;
    let env: Record<string, string>;
    let key: string;
    let organizationId: string;
    const references = new Map<string, { request: JsonObject; result?: JsonObject; status: string }>();
    let portraitReference: string;
    let legacyPortraitId: string;
    let erasedReference: string;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ledger-legacy-'));
      env = { PORTRAIT_DIR: join(dir, 'portraits'), PORTRAIT_ENCRYPTION_KEY: randomBytes(32).toString('hex') };
      // Legacy events hold result fields an older normaliser wrote (`address`): not the fields the OpenAPI document names today.
      app = await startTestApp({ env, validateResponses: false });
      pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
      organizationId = (await createOrganization(app)).id;
      key = (await issueKey(app, organizationId)).key;
      // One check of today's code: sealed already, the command leaves it as it is.
      expect((await app.request('POST', '/v1/nin', { body: { nin: '21440414976' }, headers: { 'x-service-key': key } })).status).toBe(201);
      const [sealedToday] = (await pool.query<{ data: JsonObject }>("select data from events where type = 'VerificationRequested'")).rows;

      // A portrait as stored before data keys: PRT1, under the store's own key.
      const legacyPortraits = await FilePortraitStore.open(loadConfig({ DATA_DIR: dir, ...env }));
      legacyPortraitId = await legacyPortraits.put(organizationId, 'image/png', PORTRAIT_BYTES);
      await legacyPortraits.close();

      const ids = app.app.get(IdGenerator);
      const context = { correlationId: 'legacy-fixture', actor: { type: 'api_key' as const, id: sealedToday.data.keyId as string } };
      const requestedAt = new Date('2025-06-01T10:00:00Z');
      const append = async (reference: string, request: JsonObject, terminal: VerificationEvent | undefined) => {
        const requested: VerificationEvent = {
          type: 'VerificationRequested',
          data: { ...(sealedToday.data as VerificationEvent['data'] & object), reference, request, requestedAt: requestedAt.toISOString() } as never,
        };
        // As the code before sealing wrote them: the events' shapes, straight through the event store port, no codec.
        const events = [requested, ...(terminal === undefined ? [] : [terminal])].map((event) => toAppend(event, ids.eventId(), context, requestedAt));
        await app.eventStore.append(streams.verification(reference), events, { expectedRevision: 'no_stream' });
      };
      for (const [index, person] of PEOPLE.entries()) {
        const reference = ids.reference();
        const request = { nin: person.nin };
        // The portrait's verification comes last, so it is sealed by the resumed run: a kill right after
        // a batch commits may land before that batch's old portrait records are deleted (documented).
        const withPortrait = index === PEOPLE.length - 1;
        const result: JsonObject = { ...person, ...(withPortrait ? { portraitId: legacyPortraitId } : {}) };
        if (withPortrait) portraitReference = reference;
        references.set(reference, { request, result, status: 'found' });
        await append(reference, request, {
          type: 'VerificationCompleted',
          data: { schemaVersion: 1, reference, outcome: 'found', result, completedAt: requestedAt.toISOString() },
        });
      }
      const notFound = ids.reference();
      references.set(notFound, { request: { nin: NOT_FOUND_NIN }, result: {}, status: 'not_found' });
      await append(
        notFound,
        { nin: NOT_FOUND_NIN },
        { type: 'VerificationCompleted', data: { schemaVersion: 1, reference: notFound, outcome: 'not_found', result: {}, completedAt: requestedAt.toISOString() } },
      );
      const failed = ids.reference();
      references.set(failed, { request: { nin: FAILED_NIN }, status: 'failed' });
      await append(
        failed,
        { nin: FAILED_NIN },
        {
          type: 'VerificationFailed',
          data: { schemaVersion: 1, reference: failed, reasonCode: 'provider_unavailable', errorMessage: 'The provider did not answer', failedAt: requestedAt.toISOString() },
        },
      );
      // Erased before the command ran (its key destroyed): its plain fields must end up unreadable, not re-keyed.
      erasedReference = ids.reference();
      await pool.query('insert into verification_keys (reference, organization_id, wrapped_key, destroyed_at) values ($1, $2, null, now())', [erasedReference, organizationId]);
      await append(
        erasedReference,
        { nin: ERASED.nin },
        { type: 'VerificationCompleted', data: { schemaVersion: 1, reference: erasedReference, outcome: 'found', result: ERASED, completedAt: requestedAt.toISOString() } },
      );

      // The read model has the plain rows the projection copied from them.
      const deadline = Date.now() + 10_000;
      while ((await pool.query("select 1 from verifications where status <> 'pending'")).rowCount !== references.size + 2 && Date.now() < deadline)
        await new Promise((wait) => setTimeout(wait, 50));
    });

    afterAll(async () => {
      await pool?.end();
      await app?.close();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    const processEnv = async (): Promise<NodeJS.ProcessEnv> => ({
      PATH: process.env.PATH,
      ...(await testEventStoreEnv(app.database)),
      ...env,
      DATABASE_URL: app.database.url,
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: join(dir, 'data'),
    });

    /** Every table of the database, as text. */
    async function databaseText(): Promise<string> {
      const { rows: tables } = await pool.query<{ name: string }>(
        "select quote_ident(table_name) as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
      );
      const texts = await Promise.all(
        tables.map(async ({ name }) => (await pool.query<{ text: string | null }>(`select string_agg(t::text, E'\\n') as text from ${name} t`)).rows[0].text ?? ''),
      );
      return texts.join('\n');
    }

    async function startUpLog(): Promise<string> {
      const service = await startNodeProcess(DIST.main, {
        env: {
          ...(await processEnv()),
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          RUN_PROJECTIONS: 'false',
          CONSOLE_MAIL_LOG_ONLY: 'true',
          ADMIN_TOKEN: `admin_${randomBytes(24).toString('base64url')}`,
        },
        ready: (output) => output.includes('Listening on'),
      });
      service.child.kill('SIGTERM');
      await exited(service.child);
      return service.output();
    }

    const snapshot = async () =>
      (await pool.query<EventSnapshot>('select position::text, stream_id, revision::text, event_id, type, metadata, created_at, data from events order by position')).rows;
    const sealedCount = async () =>
      Number(
        (
          await pool.query<{ n: string }>(
            `select count(*) as n from events where (type = 'VerificationRequested' and data -> 'request' ->> 'sealed' = 'aes-256-gcm') or (type = 'VerificationCompleted' and data -> 'result' ->> 'sealed' = 'aes-256-gcm')`,
          )
        ).rows[0].n,
      );

    it('killed after its first batch and run again, seals every plain field in place: same events, no plain text left, the service opens them, and its start-up warning goes', async () => {
      const before = await snapshot();
      const plainBefore = await databaseText();
      for (const value of PLAIN_STRINGS) expect(plainBefore).toContain(value);
      const warnedBefore = await startUpLog();
      expect(warnedBefore).toContain('npm run maintenance -- encrypt-legacy-events');
      for (const value of PLAIN_STRINGS) expect(warnedBefore).not.toContain(value);

      // Batches of two, paced, killed (SIGKILL: nothing to clean up) once the first has committed.
      const sealedAtStart = await sealedCount();
      const first = spawn(process.execPath, [MAINTENANCE, 'encrypt-legacy-events', '--batch-size', '2', '--pause-ms', '400'], { env: await processEnv(), stdio: 'ignore' });
      const deadline = Date.now() + 20_000;
      while ((await sealedCount()) === sealedAtStart && first.exitCode === null && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 20));
      first.kill('SIGKILL');
      await exited(first);
      const sealedAtKill = await sealedCount();
      const legacyFields = 11; // six requests, five results
      expect(sealedAtKill - sealedAtStart).toBeGreaterThanOrEqual(2);
      expect(sealedAtKill - sealedAtStart).toBeLessThan(legacyFields);

      const resumed = await runNode(MAINTENANCE, ['encrypt-legacy-events', '--batch-size', '2'], { env: await processEnv(), timeoutMs: 30_000 });
      expect(resumed.stderr).not.toMatch(/error/i);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain(`${legacyFields - (sealedAtKill - sealedAtStart)} verification events sealed in place`);
      expect(await sealedCount()).toBe(sealedAtStart + legacyFields);

      // The same events: positions, ids, revisions, types, metadata, times, and every non-personal field.
      const after = await snapshot();
      expect(after.map(({ data: _data, ...rest }) => rest)).toEqual(before.map(({ data: _data, ...rest }) => rest));
      for (const [index, event] of after.entries()) {
        const field = event.type === 'VerificationRequested' ? 'request' : event.type === 'VerificationCompleted' ? 'result' : undefined;
        if (field === undefined) {
          expect(event.data).toEqual(before[index].data);
          continue;
        }
        expect(isSealed(event.data[field])).toBe(true);
        const { [field]: _after, ...restAfter } = event.data;
        const { [field]: _before, ...restBefore } = before[index].data;
        expect(restAfter).toEqual(restBefore);
      }

      // No plain text anywhere in the database (events, read model, keys, index), nor in the portrait store's files.
      const plainAfter = await databaseText();
      for (const value of PLAIN_STRINGS) expect(plainAfter).not.toContain(value);

      // Sealed as the codec seals: the service opens them, from the read model, portrait included (now under the data key).
      const headers = { 'x-service-key': key };
      for (const [reference, expected] of references) {
        const read = await app.request('GET', `/v1/verifications/${reference}`, { headers });
        expect(read.status).toBe(200);
        expect(read.body.data).toMatchObject({ reference, status: expected.status, request: expected.request, personalDataErasedAt: null });
        if (expected.result !== undefined) {
          const { portraitId: _portraitId, ...shown } = expected.result;
          expect(read.body.data.result).toMatchObject(shown);
        }
      }
      const withPortrait = await app.request('GET', `/v1/verifications/${portraitReference}`, { headers });
      const portrait = await fetch(withPortrait.body.data.result.portraitUrl as string);
      expect(portrait.status).toBe(200);
      expect(Buffer.from(await portrait.arrayBuffer()).equals(PORTRAIT_BYTES)).toBe(true);
      const [, completed] = after.filter((event) => event.stream_id === streams.verification(portraitReference));
      const dataKey = await app.app.get(DataKeys).get(portraitReference);
      if (dataKey.status !== 'open') throw new Error('the portrait verification has no data key');
      const result = open(dataKey.key, completed.data.result as never, { reference: portraitReference, eventType: 'VerificationCompleted', field: 'result' }) as JsonObject;
      const store = await FilePortraitStore.open(loadConfig({ DATA_DIR: dir, ...env }));
      let underDataKey = false;
      const resealed = await store.get(result.portraitId as string, async () => {
        underDataKey = true;
        return dataKey.key;
      });
      // The record under the store's own key is gone once its batch committed.
      const legacyRecord = await store.get(legacyPortraitId, async () => null);
      await store.close();
      expect(legacyRecord).toBeNull();
      expect(underDataKey).toBe(true);
      expect(resealed?.bytes.equals(PORTRAIT_BYTES)).toBe(true);

      // Erased before the command: still erased, nothing of it readable.
      const erased = await app.request('GET', `/v1/verifications/${erasedReference}`, { headers });
      expect(erased.status).toBe(200);
      expect(erased.body.data).toMatchObject({ request: {}, result: {} });
      expect(erased.body.data.personalDataErasedAt).not.toBeNull();

      // Run again: nothing left to do; the service starts without the warning.
      const again = await runNode(MAINTENANCE, ['encrypt-legacy-events'], { env: await processEnv(), timeoutMs: 30_000 });
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('0 verification events sealed in place');
      expect(await snapshot()).toEqual(after);
      expect(await startUpLog()).not.toContain('encrypt-legacy-events');
    });
  },
);

describeOnProject('esdb', 'npm run maintenance -- encrypt-legacy-events on EventStoreDB', 'the PostgreSQL store is covered above', () => {
  it('refuses, naming the procedure of docs/data-protection.md; the start-up check warns once the oldest request is plain', async () => {
    const app = await startTestApp({ validateResponses: false });
    try {
      const run = await runNode(MAINTENANCE, ['encrypt-legacy-events'], {
        env: { PATH: process.env.PATH, ...(await testEventStoreEnv(app.database)), DATABASE_URL: app.database.url, DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY },
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('docs/data-protection.md');
      expect(run.stderr).toContain('EventStoreDB');

      // The start-up check samples the oldest request of $all: none, then a plain one.
      const lines: string[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
      const check = () => warnOfPlainPersonalData({ store: app.eventStore, logger });
      expect(await check()).toBe(false);
      const reference = app.app.get(IdGenerator).reference();
      const requested = {
        schemaVersion: 1,
        reference,
        organizationId: 'org_legacy',
        environment: 'test',
        keyId: 'key_legacy',
        scope: 'nin',
        category: 'identity',
        countryCode: 'NG',
        request: { nin: NOT_FOUND_NIN },
        priceKobo: 10_000,
        requestedAt: new Date().toISOString(),
      };
      await app.eventStore.append(streams.verification(reference), [{ id: app.app.get(IdGenerator).eventId(), type: 'VerificationRequested', data: requested, metadata: {} }], {
        expectedRevision: 'no_stream',
      });
      expect(await check()).toBe(true);
      expect(lines.join('')).toContain('docs/data-protection.md');
      expect(lines.join('')).toContain('npm run maintenance -- encrypt-legacy-events');
      expect(lines.join('')).not.toContain(NOT_FOUND_NIN);
    } finally {
      await app.close();
    }
  });
});
