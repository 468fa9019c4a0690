import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { toAppend } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { DataKeys } from '../data-protection/data-keys.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import type { VerificationEvent } from '../verifications/verification.events.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';
import { describeOnProject } from '../../test/support/store-independent.js';
import { LegacyEventSealer } from './legacy-events.js';

const PERSON = { nin: '70931485578', firstName: 'Erasedlater', lastName: 'Blankrow', dateOfBirth: '1970-01-02' };

describeOnProject('postgres', 'encrypt-legacy-events and a check erased before it ran', 'the command rewrites PostgreSQL rows', () => {
  let app: TestApp;
  let pool: pg.Pool;

  beforeAll(async () => {
    app = await startTestApp({ validateResponses: false });
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await app?.close();
  });

  async function row(reference: string, ready: (found: { status: string; personal_data_erased_at: Date | null } | undefined) => boolean) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await pool.query<{ status: string; personal_data_erased_at: Date | null; request: JsonObject; result: JsonObject }>(
        'select status, personal_data_erased_at, request, result from verifications where reference = $1',
        [reference],
      );
      if (ready(rows[0])) return rows[0];
      if (Date.now() > deadline) throw new Error(`${reference} not projected as awaited`);
      await new Promise((wait) => setTimeout(wait, 50));
    }
  }

  it('leaves the erased row of the read model blank: no ciphertext written back into its request or result', async () => {
    const { id: organizationId } = await createOrganization(app);
    const { key } = await issueKey(app, organizationId);
    const headers = { 'x-service-key': key };
    const today = await app.request('POST', '/v1/nin', { body: { nin: '21440414976' }, headers });
    expect(today.status).toBe(201);
    const { rows: requested } = await pool.query<{ data: JsonObject }>("select data from events where type = 'VerificationRequested' and data ->> 'reference' = $1", [
      today.body.data.reference,
    ]);

    // A check as the code before sealing wrote it: plain fields, no data key.
    const ids = app.app.get(IdGenerator);
    const reference = ids.reference();
    const at = new Date('2025-06-01T10:00:00Z').toISOString();
    const context = { correlationId: 'legacy-fixture', actor: { type: 'system' as const, id: 'test' } };
    const events: VerificationEvent[] = [
      { type: 'VerificationRequested', data: { ...(requested[0].data as object), reference, request: { nin: PERSON.nin }, requestedAt: at } as never },
      { type: 'VerificationCompleted', data: { schemaVersion: 1, reference, outcome: 'found', result: PERSON, completedAt: at } },
    ];
    await app.eventStore.append(
      streams.verification(reference),
      events.map((event) => toAppend(event, ids.eventId(), context, new Date(at))),
      { expectedRevision: 'no_stream' },
    );
    await row(reference, (found) => found !== undefined && found.status === 'found');

    // Erased before the command runs: the read model's row blanked, the key destroyed.
    const erased = await app.request('POST', `/v1/verifications/${reference}/erasure`, { headers });
    expect(erased.status).toBe(200);
    const blank = await row(reference, (found) => found?.personal_data_erased_at != null);
    expect([blank.request, blank.result]).toEqual([{}, {}]);

    const legacyEvents = app.eventStore.logReader?.legacyEvents;
    if (legacyEvents === undefined) throw new Error('the PostgreSQL store has a log reader');
    const summary = await new LegacyEventSealer(pool, legacyEvents, app.app.get(DataKeys), undefined).run({ batchSize: 10, pauseMs: 0 });
    expect(summary).toMatchObject({ events: 2, shredded: 2, interrupted: false });

    const after = await row(reference, () => true);
    expect(after.personal_data_erased_at).not.toBeNull();
    expect([after.request, after.result]).toEqual([{}, {}]);
    const read = await app.request('GET', `/v1/verifications/${reference}`, { headers });
    expect(read.body.data).toMatchObject({ request: {}, result: {}, personalDataErasedAt: erased.body.data.personalDataErasedAt });
  });
});
