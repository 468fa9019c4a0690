import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { IdGenerator } from '../../src/common/ids.js';
import { streams } from '../../src/common/streams.js';
import { DataKeys } from '../../src/data-protection/data-keys.js';
import type { JsonObject } from '../../src/event-store/event-store.port.js';
import { VerificationStreams } from '../../src/verifications/verification.stream.js';
import { verificationView } from '../../src/verifications/verification.views.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { streamEvents } from '../support/event-store.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

const NIN = '21440414976';

/**
 * What the service does with a sealed field it cannot open: a ciphertext moved into another
 * verification's event (an incident: logged without the data) and a destroyed data key (the
 * erasure to come) both read as the erased view, 200 and never a 500, from the event stream and
 * from the read model alike.
 */
describe('Sealed personal fields that cannot be opened', () => {
  let app: TestApp;
  let key: string;
  let organizationId: string;
  const captured: string[] = [];
  const headers = () => ({ 'x-service-key': key });

  beforeAll(async () => {
    app = await startTestApp({ env: { LOG_LEVEL: 'info' }, logDestination: { write: (line: string) => void captured.push(line) } });
    organizationId = (await createOrganization(app)).id;
    key = (await issueKey(app, organizationId)).key;
  });

  afterAll(async () => {
    await app?.close();
  });

  async function eventually(reference: string, done: (body: { data: Record<string, unknown> }) => boolean): Promise<{ status: number; body: { data: Record<string, unknown> } }> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const response = await app.request('GET', `/v1/verifications/${reference}`, { headers: headers() });
      if ((response.status === 200 && done(response.body)) || Date.now() > deadline) return response;
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
  }

  it("a ciphertext copied into another verification's event opens to nothing: the verification shows as erased, 200, and the incident is logged without the data", async () => {
    const original = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers: headers() });
    expect(original.status).toBe(201);
    expect(original.body.data.personalDataErasedAt).toBeNull();
    const [requested] = await streamEvents(app.eventStore, streams.verification(original.body.data.reference));
    expect((requested.data.request as JsonObject).sealed).toBe('aes-256-gcm');

    // A forged verification with a live key of its own, whose request is the other one's ciphertext.
    const forged = app.app.get(IdGenerator).reference();
    await app.app.get(DataKeys).create(organizationId, 'test', forged);
    await app.eventStore.append(
      streams.verification(forged),
      [{ id: app.app.get(IdGenerator).eventId(), type: 'VerificationRequested', data: { ...requested.data, reference: forged }, metadata: requested.metadata }],
      { expectedRevision: 'no_stream' },
    );

    const read = await eventually(forged, (body) => body.data.personalDataErasedAt !== null);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ reference: forged, scope: 'nin', request: {}, result: {} });
    expect(read.body.data.personalDataErasedAt).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*\+00:00$/));
    const incidents = captured
      .join('')
      .split('\n')
      .filter((line) => line.includes('Incident') && line.includes(forged));
    expect(incidents.length).toBeGreaterThan(0);
    expect(captured.join('')).not.toContain(NIN);

    // The original is untouched.
    const again = await app.request('GET', `/v1/verifications/${original.body.data.reference}`, { headers: headers() });
    expect(again.body.data.request).toEqual({ nin: NIN });
    expect(again.body.data.personalDataErasedAt).toBeNull();
  });

  it('a destroyed data key reads as erased at the time it was destroyed, every non-personal field kept, in the read model and in the stream, and its portrait is gone', async () => {
    const run = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers: headers() });
    expect(run.status).toBe(201);
    const reference = run.body.data.reference as string;
    await eventually(reference, (body) => body.data.status === 'found');
    const portraitUrl = run.body.data.result.portraitUrl as string;
    expect((await fetch(portraitUrl)).status).toBe(200);

    const client = new pg.Client({ connectionString: app.database.url });
    await client.connect();
    try {
      await client.query("update verification_keys set wrapped_key = null, destroyed_at = '2026-03-04T05:06:07.089Z' where reference = $1", [reference]);
    } finally {
      await client.end();
    }
    app.app.get(DataKeys).forget(reference);

    const erased = await app.request('GET', `/v1/verifications/${reference}`, { headers: headers() });
    expect(erased.status).toBe(200);
    const { request: _request, result: _result, personalDataErasedAt: _erasedAt, ...facts } = run.body.data;
    expect(erased.body.data).toEqual({ ...facts, request: {}, result: {}, personalDataErasedAt: '2026-03-04T05:06:07.089+00:00' });
    expect(Object.keys(erased.body.data).sort()).toEqual(Object.keys(run.body.data).sort());
    // The portrait was sealed under the same key: its (still validly signed) link now finds nothing.
    expect((await fetch(portraitUrl)).status).toBe(404);

    // Folded from the stream (what a read racing the projection and the recovery process see): the same.
    const folded = await app.app.get(VerificationStreams).load(reference);
    expect(verificationView(folded)).toMatchObject({ reference, status: 'found', request: {}, result: {}, personalDataErasedAt: '2026-03-04T05:06:07.089+00:00' });
  });
});
