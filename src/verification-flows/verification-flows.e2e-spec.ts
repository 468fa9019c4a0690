import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { waitUntil } from '../../projections/runner/counting.projection.testing.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';
import { extractFrame, makeFakeCamera } from '../../test/support/fake-camera.js';
import { documentPhoto, type DocumentPhotoOptions } from '../../test/support/sample-documents.js';
import { cutSample, toJpeg } from '../../test/support/sample-faces.js';
import { Clock } from '../common/clock.js';
import { CONFIG } from '../config/runtime.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { PG_POOL } from '../database/pool.js';
import { PortraitStore } from '../portraits/portrait.store.js';
import { READY_MADE_PEOPLE, sandboxPerson } from '../scopes/sandbox-world.js';
import { SessionExpirySweep } from './session-expiry.js';

const FLOW = {
  name: 'Onboarding',
  steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin', 'bvn'] }, { type: 'selfie' }],
  decision: { faceMatchThreshold: 80, reviewMarginPoints: 10 },
  branding: { displayName: 'Acme Bank', colour: '#1C7ED6', logoUrl: null },
  allowedOrigins: ['https://acme.example'],
  redirectUrl: 'https://acme.example/onboarding/done',
};
const person = sandboxPerson(READY_MADE_PEOPLE[0]);
const selfieBase64 = () => Buffer.from(toJpeg(cutSample('authorWebcam'))).toString('base64');

describe('Verification flows and sessions over HTTP: a flow, a session, the browser through it with its client secret, the decision', () => {
  let app: TestApp;
  let headers: Record<string, string>;
  let otherHeaders: Record<string, string>;
  let flowId: string;
  let turnFrames: string[];
  let otherTurnFrames: string[];

  /**
   * The document photos, drawn before the service starts: drawing one blocks this process (the
   * service's too, in-process) for seconds, and a kept-alive connection idle past its limit
   * meanwhile would be closed by the service as the next request goes out on it.
   */
  const photos: Record<'licenceFront' | 'licenceBack' | 'blurred' | 'unframed' | 'glaring' | 'small' | 'faceless', string> = {
    licenceFront: '',
    licenceBack: '',
    blurred: '',
    unframed: '',
    glaring: '',
    small: '',
    faceless: '',
  };

  beforeAll(async () => {
    const photo = (options: DocumentPhotoOptions = {}) => Buffer.from(toJpeg(documentPhoto(options), 90)).toString('base64');
    Object.assign(photos, {
      licenceFront: photo(),
      licenceBack: photo({ face: null, seed: 2 }),
      blurred: photo({ face: null, blurPx: 1 }),
      unframed: photo({ face: null, left: -0.1 }),
      glaring: photo({ face: null, glare: 0.1 }),
      small: photo({ face: null, cardShare: 0.35 }),
      faceless: photo({ face: null }),
    });
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    const organizationId = (await createOrganization(app, { scopes: ['nin', 'bvn', 'face_match'] })).id;
    headers = { 'x-service-key': (await issueKey(app, organizationId)).key };
    otherHeaders = { 'x-service-key': (await issueKey(app, (await createOrganization(app)).id)).key };
    // The frames of a head turn, as the page's guide sends them beside the selfie.
    // And someone else's head turn, to send beside the author's selfie.
    const [camera, other] = await Promise.all([makeFakeCamera(), makeFakeCamera({ face: 'otherPerson' })]);
    const framesOf = (path: string) => Promise.all([0, 0.75, 1.5, 2.25].map(async (seconds) => Buffer.from(await extractFrame(path, seconds)).toString('base64')));
    try {
      [turnFrames, otherTurnFrames] = await Promise.all([framesOf(camera.path), framesOf(other.path)]);
    } finally {
      await Promise.all([camera.dispose(), other.dispose()]);
    }
    // A receiver that is never reached (nothing listens there): the delivery rows are what the test reads.
    expect((await app.request('POST', '/v1/webhook_endpoints', { body: { url: 'http://127.0.0.1:9/hooks', eventTypes: [] }, headers })).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
  });

  const start = async (body: Record<string, unknown> = {}) => {
    const created = await app.request('POST', '/v1/verification_sessions', { body: { flowId, customerId: 'cus_4821', metadata: { plan: 'gold' }, ...body }, headers });
    expect(created.status).toBe(201);
    return created.body.data as { id: string; clientSecret: string; hostedUrl: string; status: string; flowVersion: number; expiresAt: string };
  };
  const browser = (session: { id: string; clientSecret: string }, secret = session.clientSecret) => ({
    call: (method: string, path: string, body?: unknown) =>
      app.request(method, `/verify/api/sessions/${session.id}${path}`, { body, headers: { authorization: `Bearer ${secret}` } }),
  });
  const consent = async (session: { id: string; clientSecret: string }) => {
    const shown = await browser(session).call('GET', '');
    expect(shown.status).toBe(200);
    const { textVersion, textHash } = shown.body.data.consent as { textVersion: number; textHash: string };
    const given = await browser(session).call('POST', '/consent', { textVersion, textHash });
    expect(given.status).toBe(200);
  };

  it('creates a flow, lists and reads it, and a new version numbers after it; another organization sees none of it', async () => {
    const created = await app.request('POST', '/v1/verification_flows', { body: FLOW, headers });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ version: 1, environment: 'test', name: 'Onboarding', branding: { colour: '#1c7ed6' }, sessionLifetimeSeconds: 1_800 });
    flowId = created.body.data.id;
    const listed = await app.request('GET', '/v1/verification_flows?pageSize=5', { headers });
    expect(listed.body.meta).toEqual({ total: 1, page: 1, pageSize: 5, totalPages: 1 });
    expect((await app.request('GET', `/v1/verification_flows/${flowId}`, { headers: otherHeaders })).status).toBe(404);

    const invalid = await app.request('POST', '/v1/verification_flows', { body: { ...FLOW, steps: [{ type: 'selfie' }], allowedOrigins: ['https://acme.example/path'] }, headers });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.fields.map((field: { field: string }) => field.field)).toEqual(['steps', 'steps', 'allowedOrigins[0]']);
  });

  it('keeps a session on the flow version it started with', async () => {
    const before = await start();
    const versioned = await app.request('POST', `/v1/verification_flows/${flowId}/versions`, {
      body: { ...FLOW, decision: { faceMatchThreshold: 99, reviewMarginPoints: 1 } },
      headers,
    });
    expect(versioned.status).toBe(201);
    expect(versioned.body.data.version).toBe(2);
    expect((await app.request('GET', `/v1/verification_sessions/${before.id}`, { headers })).body.data.flowVersion).toBe(1);
    // Back to the first rule for the sessions below.
    expect((await app.request('POST', `/v1/verification_flows/${flowId}/versions`, { body: FLOW, headers })).body.data.version).toBe(3);
    expect((await start()).flowVersion).toBe(3);
  });

  it('hands out the client secret once, in the hosted URL’s fragment only, and refuses it on another session', async () => {
    const session = await start();
    const url = new URL(session.hostedUrl);
    expect(url.pathname).toBe(`/verify/${session.id}`);
    expect(url.search).toBe('');
    expect(url.hash).toBe(`#${session.clientSecret}`);
    const read = await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers });
    expect(read.body.data).toMatchObject({ status: 'created', customerId: 'cus_4821', metadata: { plan: 'gold' } });
    expect(JSON.stringify(read.body)).not.toContain(session.clientSecret);
    const other = await start();
    expect((await browser(other, session.clientSecret).call('GET', '')).status).toBe(401);
    expect((await app.request('GET', `/verify/api/sessions/${session.id}`)).status).toBe(401);
    expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers: otherHeaders })).status).toBe(404);
  });

  it('serves the hosted page framable by the flow’s allowed origins only, and by nobody for an unknown session', async () => {
    const session = await start();
    const page = await fetch(`${app.baseUrl}/verify/${session.id}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<main id="app"');
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain('frame-ancestors https://acme.example');
    expect(policy).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBeNull();
    expect(page.headers.get('permissions-policy')).toContain('camera=(self)');
    const unknown = await fetch(`${app.baseUrl}/verify/vss_01JD3Q9ZK8W6V2C4X7N5B0M1TR`);
    expect(unknown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('serves <verification-flow> to any origin: a JavaScript module, cached an hour, revalidated by its ETag', async () => {
    const script = await fetch(`${app.baseUrl}/verify/element.js`, { headers: { origin: 'https://shop.example' } });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=3600, stale-while-revalidate=86400');
    expect(script.headers.get('access-control-allow-origin')).toBe('*');
    expect(script.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(await script.text()).toContain('verification-flow');
    const etag = script.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[\w-]{22}"$/);
    const again = await fetch(`${app.baseUrl}/verify/element.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('starts a session per visit of a reusable link, and sends the visitor to its page with the secret in the fragment', async () => {
    const link = await app.request('POST', `/v1/verification_flows/${flowId}/links`, { headers });
    expect(link.status).toBe(201);
    expect(link.body.data.url).toBe(`${app.baseUrl}/verify/start/${link.body.data.id}`);
    const visits = await Promise.all([1, 2].map(() => fetch(link.body.data.url as string, { redirect: 'manual' })));
    const pages = visits.map((visit) => new URL(visit.headers.get('location') ?? '', app.baseUrl));
    expect(visits.map((visit) => visit.status)).toEqual([303, 303]);
    expect(pages[0].pathname).not.toBe(pages[1].pathname);
    for (const page of pages) {
      expect(page.hash).toMatch(/^#vcs_/);
      const sessionId = page.pathname.split('/').pop() as string;
      expect((await app.request('GET', `/v1/verification_sessions/${sessionId}`, { headers })).body.data).toMatchObject({
        status: 'created',
        customerId: `link:${link.body.data.id}`,
      });
    }
    expect((await fetch(`${app.baseUrl}/verify/start/vln_01JD3Q9ZK8W6V2C4X7N5B0M1TR`, { redirect: 'manual' })).status).toBe(404);
    expect((await app.request('POST', `/v1/verification_flows/${flowId}/links`, { headers: otherHeaders })).status).toBe(404);
  });

  it('takes nothing before consent, and the consent only for the text it served', async () => {
    const session = await start();
    const early = await browser(session).call('POST', '/identity', { kind: 'nin', number: person.nin });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('step_out_of_order');
    expect((await browser(session).call('POST', '/consent', { textVersion: 1, textHash: '0'.repeat(64) })).status).toBe(422);
    await consent(session);
    expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data.status).toBe('in_progress');
  });

  it('runs consent, NIN and selfie to an approval: the checks are ordinary verifications, charged, listed, and the decision comes by GET and by webhook; then the secret is refused', async () => {
    const balanceBefore = (await app.request('GET', '/v1/wallet', { headers })).body.data.availableKobo as number;
    const session = await start();
    await consent(session);
    const identity = await browser(session).call('POST', '/identity', { kind: 'nin', number: person.nin });
    expect(identity.status).toBe(200);
    expect(JSON.stringify(identity.body)).not.toContain(person.firstName);
    const selfie = await browser(session).call('POST', '/selfie', { image: selfieBase64(), livenessFrames: turnFrames });
    expect(selfie.status).toBe(200);
    expect(selfie.body.data.liveness).toBe('head_turn');
    const submitted = await browser(session).call('POST', '/submit');
    expect(submitted.status).toBe(200);
    expect(submitted.body.data).toEqual({ status: 'submitted', redirectUrl: `https://acme.example/onboarding/done?session=${session.id}` });

    const decided = (await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data;
    expect(decided).toMatchObject({
      status: 'approved',
      decision: { reasons: [] },
      liveness: 'head_turn',
      verifications: { identity: expect.stringMatching(/^vrf_/), faceMatch: expect.stringMatching(/^vrf_/) },
    });
    const listed = (await app.request('GET', '/v1/verifications?pageSize=100', { headers })).body.data as { reference: string; scope: string; charged: boolean }[];
    expect(listed.find((check) => check.reference === decided.verifications.identity)).toMatchObject({ scope: 'nin', charged: true });
    expect(listed.find((check) => check.reference === decided.verifications.faceMatch)).toMatchObject({ scope: 'face_match', charged: true });
    const balanceAfter = (await app.request('GET', '/v1/wallet', { headers })).body.data.availableKobo as number;
    expect(balanceBefore - balanceAfter).toBe(10_000 + 20_000);

    const pool = app.app.get<symbol, pg.Pool>(PG_POOL);
    await waitUntil(
      async () => (await pool.query(`select 1 from webhook_deliveries where event_type = 'verification_session.approved' and body like $1`, [`%${session.id}%`])).rowCount === 1,
      10_000,
      'the approval delivery',
    );
    const bodies = (await pool.query<{ body: string }>('select body from webhook_deliveries where body like $1', [`%${session.id}%`])).rows.map((row) => row.body).join('\n');
    for (const personal of [person.nin, 'cus_4821', person.firstName]) expect(bodies).not.toContain(personal);

    const reused = await browser(session).call('GET', '');
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('session_closed');
  });

  it('refuses a selfie with no face, with the problem in the answer', async () => {
    const session = await start();
    await consent(session);
    expect((await browser(session).call('POST', '/identity', { kind: 'nin', number: person.nin })).status).toBe(200);
    const refused = await browser(session).call('POST', '/selfie', { image: Buffer.from(toJpeg(cutSample('noFace'))).toString('base64') });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'selfie_refused', details: { problems: expect.arrayContaining(['no_face']) } });
  });

  it('declines a face the record does not match (sandbox: a NIN ending in 4)', async () => {
    const session = await start();
    await consent(session);
    expect((await browser(session).call('POST', '/identity', { kind: 'nin', number: '12345678904' })).status).toBe(200);
    expect((await browser(session).call('POST', '/selfie', { image: selfieBase64() })).status).toBe(200);
    expect((await browser(session).call('POST', '/submit')).status).toBe(200);
    expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data).toMatchObject({
      status: 'declined',
      decision: { reasons: ['face_mismatch'] },
    });
  });

  describe('with liveness required (the default of a flow with a selfie)', () => {
    const decide = async (selfie: Record<string, unknown>, sessionBody: Record<string, unknown> = {}) => {
      const session = await start(sessionBody);
      await consent(session);
      expect((await browser(session).call('POST', '/identity', { kind: 'nin', number: person.nin })).status).toBe(200);
      const taken = await browser(session).call('POST', '/selfie', { image: selfieBase64(), ...selfie });
      expect(taken.status).toBe(200);
      expect((await browser(session).call('POST', '/submit')).status).toBe(200);
      return { taken: taken.body.data, decided: (await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data };
    };

    it('the flow says so when it is read', async () => {
      expect((await app.request('GET', `/v1/verification_flows/${flowId}`, { headers })).body.data.decision).toEqual({
        faceMatchThreshold: 80,
        reviewMarginPoints: 10,
        liveness: 'required',
      });
    });

    it('sends a matching selfie without frames (a chosen file) to review, saying liveness was not shown', async () => {
      const { taken, decided } = await decide({});
      expect(taken.liveness).toBeNull();
      expect(decided).toMatchObject({ status: 'needs_review', liveness: null, decision: { reasons: ['liveness_not_shown'] } });
    });

    it('does not count frames of another person turning beside the selfie, nor frames of no face', async () => {
      const noFace = Buffer.from(toJpeg(cutSample('noFace'))).toString('base64');
      const { taken, decided } = await decide({ livenessFrames: [...otherTurnFrames, noFace] });
      expect(taken.liveness).toBeNull();
      expect(decided).toMatchObject({ status: 'needs_review', decision: { reasons: ['liveness_not_shown'] } });
    });

    it('approves without frames a flow version whose rule turns liveness off', async () => {
      const off = await app.request('POST', `/v1/verification_flows/${flowId}/versions`, { body: { ...FLOW, decision: { ...FLOW.decision, liveness: 'off' } }, headers });
      expect(off.status).toBe(201);
      try {
        expect((await decide({})).decided).toMatchObject({ status: 'approved', flowVersion: off.body.data.version, decision: { reasons: [] } });
      } finally {
        expect((await app.request('POST', `/v1/verification_flows/${flowId}/versions`, { body: FLOW, headers })).status).toBe(201);
      }
    });

    it('refuses a rule that is neither required nor off, and required in a flow without a selfie', async () => {
      const invalid = await app.request('POST', '/v1/verification_flows', { body: { ...FLOW, decision: { liveness: 'sometimes' } }, headers });
      expect(invalid.status).toBe(422);
      expect(invalid.body.error.details.fields).toEqual([{ field: 'decision.liveness', message: 'must be one of required, off' }]);
      const noSelfie = await app.request('POST', '/v1/verification_flows', { body: { ...FLOW, steps: FLOW.steps.slice(0, 2), decision: { liveness: 'required' } }, headers });
      expect(noSelfie.status).toBe(422);
      expect(noSelfie.body.error.details.fields).toEqual([{ field: 'decision.liveness', message: 'can be required only in a flow with a selfie step' }]);
    });
  });

  it('expires a session past its time: the browser is refused, and GET says expired', async () => {
    const session = await start();
    const clock = app.app.get(Clock);
    const ownNow = clock.now.bind(clock);
    clock.now = () => new Date(Date.parse(session.expiresAt) + 1_000);
    try {
      const late = await browser(session).call('GET', '');
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('session_closed');
      // The page says the link expired, not merely that the verification ended.
      expect(late.body.error.details).toEqual({ status: 'expired' });
      expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data.status).toBe('expired');
    } finally {
      clock.now = ownNow;
    }
  });

  it('expires, by its sweep, a session nobody reads again, and announces it', async () => {
    const session = await start();
    expect(await app.app.get(SessionExpirySweep).runOnce(new Date(Date.parse(session.expiresAt) + 1_000))).toBeGreaterThanOrEqual(1);
    const pool = app.app.get<symbol, pg.Pool>(PG_POOL);
    expect((await pool.query<{ status: string }>('select status from verification_sessions where id = $1', [session.id])).rows[0]?.status).toBe('expired');
    await waitUntil(
      async () => (await pool.query(`select 1 from webhook_deliveries where event_type = 'verification_session.expired' and body like $1`, [`%${session.id}%`])).rowCount === 1,
      10_000,
      'the expiry delivery',
    );
  });

  it('sends to review, by the same sweep, a session whose decision was cut short after its submission', async () => {
    const session = await start();
    await consent(session);
    expect((await browser(session).call('POST', '/identity', { kind: 'nin', number: person.nin })).status).toBe(200);
    expect((await browser(session).call('POST', '/selfie', { image: selfieBase64() })).status).toBe(200);
    // The submission written, then the process gone before the decision.
    const stream = `verificationSession-${session.id}`;
    const events = await app.eventStore.readStream(stream, { direction: 'forwards', fromRevision: 0n, maxCount: 50 });
    const ids = { schemaVersion: 1, sessionId: session.id, organizationId: events[0].data.organizationId, environment: 'test' };
    await app.eventStore.append(stream, [{ id: randomUUID(), type: 'VerificationSessionSubmitted', data: ids, metadata: { occurredAt: new Date().toISOString() } }], {
      expectedRevision: events.at(-1)?.revision ?? 0n,
    });
    const pool = app.app.get<symbol, pg.Pool>(PG_POOL);
    await waitUntil(
      async () => (await pool.query<{ status: string }>('select status from verification_sessions where id = $1', [session.id])).rows[0]?.status === 'submitted',
      10_000,
      'the submission read',
    );
    await app.app.get(SessionExpirySweep).runOnce(new Date(Date.now() + 11 * 60_000));
    expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data).toMatchObject({
      status: 'needs_review',
      decision: { reasons: ['face_match_unavailable', 'liveness_not_shown'] },
    });
  });

  it('cancels a session: its secret stops working', async () => {
    const session = await start();
    const cancelled = await app.request('POST', `/v1/verification_sessions/${session.id}/cancel`, { headers });
    expect(cancelled.body.data.status).toBe('cancelled');
    const refused = await browser(session).call('GET', '');
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toEqual({ status: 'cancelled' });
  });

  it('erases a session: its selfie can no longer be opened, and the customer id reads as null', async () => {
    const session = await start();
    await consent(session);
    expect((await browser(session).call('POST', '/identity', { kind: 'nin', number: person.nin })).status).toBe(200);
    expect((await browser(session).call('POST', '/selfie', { image: selfieBase64() })).status).toBe(200);
    const events = await app.eventStore.readStream(`verificationSession-${session.id}`, { direction: 'forwards', fromRevision: 0n, maxCount: 50 });
    const selfieId = events.find((event) => event.type === 'VerificationSessionSelfieCaptured')?.data.selfieId as string;
    const files = app.app.get(PortraitStore);
    const keys = app.app.get(DataKeys);
    const keyOf = async (reference: string) => {
      const key = await keys.get(reference);
      return key.status === 'open' ? key.key : null;
    };
    expect((await files.get(selfieId, keyOf))?.contentType).toBe('image/jpeg');

    const erased = await app.request('POST', `/v1/verification_sessions/${session.id}/erase`, { headers });
    expect(erased.status).toBe(200);
    expect(erased.body.data).toMatchObject({ customerId: null, metadata: null, personalDataErasedAt: expect.any(String) });
    expect(await files.get(selfieId, keyOf)).toBeNull();
    expect((await keys.get(session.id)).status).not.toBe('open');
  });

  describe('A flow that takes a document after the identity number', () => {
    let documentsFlowId: string;
    let licenceFront: string;
    let licenceBack: string;
    beforeAll(async () => {
      const created = await app.request('POST', '/v1/verification_flows', {
        body: {
          ...FLOW,
          name: 'Documents',
          steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }, { type: 'documents', kinds: ['passport', 'drivers_licence_front', 'drivers_licence_back'] }],
        },
        headers,
      });
      expect(created.status).toBe(201);
      // The licence's sides as earlier flows named them read as the licence, both sides.
      expect(created.body.data.steps[2]).toEqual({ type: 'documents', kinds: ['passport', 'drivers_licence'] });
      documentsFlowId = created.body.data.id;
      ({ licenceFront, licenceBack } = photos);
    });
    const startWithDocuments = () => start({ flowId: documentsFlowId });
    const upToDocuments = async () => {
      const session = await startWithDocuments();
      await consent(session);
      expect((await browser(session).call('POST', '/identity', { kind: 'nin', number: person.nin })).status).toBe(200);
      return session;
    };

    it('shows the page the documents and their sides, takes none before consent and the identity number, and none on a flow without documents', async () => {
      const session = await startWithDocuments();
      expect((await browser(session).call('GET', '')).body.data.documents).toEqual([
        { document: 'passport', sides: ['data_page'] },
        { document: 'drivers_licence', sides: ['front', 'back'] },
      ]);
      const body = { document: 'drivers_licence', side: 'front', image: licenceFront };
      const early = await browser(session).call('POST', '/documents', body);
      expect([early.status, early.body.error.code]).toEqual([409, 'step_out_of_order']);
      await consent(session);
      expect((await browser(session).call('POST', '/documents', body)).body.error.code).toBe('step_out_of_order');
      const selfieOnly = await start();
      await consent(selfieOnly);
      expect((await browser(selfieOnly).call('POST', '/documents', body)).body.error.code).toBe('step_out_of_order');
    });

    it('takes a licence’s two sides to an approval: re-encoded without EXIF, sealed, recorded by name only, read back on the session', async () => {
      const session = await upToDocuments();
      // A JPEG carrying an EXIF segment with a location: the kept image has the pixels only.
      const jpeg = Buffer.from(licenceFront, 'base64');
      const payload = Buffer.from('Exif\0\0GPS 6.5244N 3.3792E home');
      const exif = Buffer.concat([Buffer.from([0xff, 0xe1, 0, payload.length + 2]), payload]);
      const withExif = Buffer.concat([jpeg.subarray(0, 2), exif, jpeg.subarray(2)]).toString('base64');
      expect((await browser(session).call('POST', '/documents', { document: 'drivers_licence', side: 'front', image: withExif })).status).toBe(200);
      const early = await browser(session).call('POST', '/submit');
      expect([early.status, early.body.error.code]).toEqual([409, 'step_out_of_order']);
      const back = await browser(session).call('POST', '/documents', { document: 'drivers_licence', side: 'back', image: licenceBack });
      expect(back.body.data).toEqual({ status: 'in_progress', accepted: true });
      expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data.documents).toEqual([
        { document: 'drivers_licence', side: 'front' },
        { document: 'drivers_licence', side: 'back' },
      ]);

      const events = await app.eventStore.readStream(`verificationSession-${session.id}`, { direction: 'forwards', fromRevision: 0n, maxCount: 50 });
      const captured = events.filter((event) => event.type === 'VerificationSessionDocumentCaptured');
      expect(captured.map((event) => Object.keys(event.data).sort())).toEqual(
        Array(2).fill(['document', 'documentId', 'environment', 'organizationId', 'schemaVersion', 'sessionId', 'side']),
      );
      const files = app.app.get(PortraitStore);
      const keys = app.app.get(DataKeys);
      const keyOf = async (reference: string) => {
        const key = await keys.get(reference);
        return key.status === 'open' ? key.key : null;
      };
      const front = await files.get(captured[0].data.documentId as string, keyOf);
      expect(front?.contentType).toBe('image/jpeg');
      expect(front?.bytes.includes('GPS')).toBe(false);
      expect(front?.bytes.includes('Exif')).toBe(false);
      // Sealed: without the session's key it does not open.
      await expect(files.get(captured[0].data.documentId as string, async () => Buffer.alloc(32))).rejects.toThrow('unable to authenticate data');

      expect((await browser(session).call('POST', '/submit')).status).toBe(200);
      expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data).toMatchObject({ status: 'approved' });
    });

    it('refuses a bad photo with 422 and the reasons the page puts into words, and a document or side the flow does not take', async () => {
      const { blurred, unframed, glaring, small, faceless } = photos;
      const session = await upToDocuments();
      const refused = async (image: string, side = 'back') => {
        const answer = await browser(session).call('POST', '/documents', { document: 'drivers_licence', side, image });
        expect(answer.status).toBe(422);
        return answer.body.error;
      };
      expect(await refused(blurred)).toMatchObject({ code: 'document_refused', details: { problems: ['blurred'] } });
      expect(await refused(unframed)).toMatchObject({ code: 'document_refused', details: { problems: ['document_not_framed'] } });
      expect(await refused(glaring)).toMatchObject({ code: 'document_refused', details: { problems: ['glare'] } });
      expect(await refused(small)).toMatchObject({ code: 'document_refused', details: { problems: ['document_too_small'] } });
      expect(await refused(faceless, 'front')).toMatchObject({ code: 'document_refused', details: { problems: ['no_face_on_document'] } });
      expect(await refused(Buffer.from('not an image').toString('base64'))).toMatchObject({ code: 'document_refused', details: { problems: ['unreadable_image'] } });
      const wrongSide = await browser(session).call('POST', '/documents', { document: 'passport', side: 'back', image: licenceBack });
      expect(wrongSide.body.error.details.fields).toEqual([{ field: 'side', message: 'must be one of data_page' }]);
      const notTaken = await browser(session).call('POST', '/documents', { document: 'voters_card', side: 'front', image: licenceBack });
      expect(notTaken.body.error.details.fields).toEqual([{ field: 'document', message: 'must be one of passport, drivers_licence' }]);
      expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data.documents).toEqual([]);
    });

    it('takes at most 8 images a session and 1 MiB an image', async () => {
      const session = await upToDocuments();
      const tooLarge = await browser(session).call('POST', '/documents', { document: 'drivers_licence', side: 'back', image: Buffer.alloc(1_200_000, 1).toString('base64') });
      expect([tooLarge.status, tooLarge.body.error.details.fields[0].field]).toEqual([422, 'image']);
      for (let i = 0; i < 8; i++) expect((await browser(session).call('POST', '/documents', { document: 'drivers_licence', side: 'back', image: licenceBack })).status).toBe(200);
      const ninth = await browser(session).call('POST', '/documents', { document: 'drivers_licence', side: 'back', image: licenceBack });
      expect([ninth.status, ninth.body.error.code]).toEqual([409, 'session_closed']);
      expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data.documents).toEqual([{ document: 'drivers_licence', side: 'back' }]);
    });

    it('erases a session’s document images with it', async () => {
      const session = await upToDocuments();
      expect((await browser(session).call('POST', '/documents', { document: 'drivers_licence', side: 'back', image: licenceBack })).status).toBe(200);
      const events = await app.eventStore.readStream(`verificationSession-${session.id}`, { direction: 'forwards', fromRevision: 0n, maxCount: 50 });
      const documentId = events.find((event) => event.type === 'VerificationSessionDocumentCaptured')?.data.documentId as string;
      const files = app.app.get(PortraitStore);
      const keys = app.app.get(DataKeys);
      const keyOf = async (reference: string) => {
        const key = await keys.get(reference);
        return key.status === 'open' ? key.key : null;
      };
      expect((await files.get(documentId, keyOf))?.contentType).toBe('image/jpeg');
      expect((await app.request('POST', `/v1/verification_sessions/${session.id}/erase`, { headers })).status).toBe(200);
      // Deleted from the store, whatever key is offered.
      expect(await files.get(documentId)).toBeNull();
      expect(await files.owner(documentId)).toBeNull();
    });

    it('erases by retention an ended session’s document images and data key, not before its time', async () => {
      const session = await upToDocuments();
      expect((await browser(session).call('POST', '/documents', { document: 'drivers_licence', side: 'back', image: licenceBack })).status).toBe(200);
      expect((await app.request('POST', `/v1/verification_sessions/${session.id}/cancel`, { headers })).status).toBe(200);
      const events = await app.eventStore.readStream(`verificationSession-${session.id}`, { direction: 'forwards', fromRevision: 0n, maxCount: 50 });
      const documentId = events.find((event) => event.type === 'VerificationSessionDocumentCaptured')?.data.documentId as string;
      const files = app.app.get(PortraitStore);
      const keys = app.app.get(DataKeys);
      const dayMs = 86_400_000;
      const retentionDays = app.app.get(CONFIG).verifications.retentionDays;
      const sweep = app.app.get(SessionExpirySweep);

      await sweep.runOnce(new Date(Date.now() + (retentionDays - 1) * dayMs));
      expect((await keys.get(session.id)).status).toBe('open');
      expect(await files.owner(documentId)).not.toBeNull();

      await sweep.runOnce(new Date(Date.now() + (retentionDays + 1) * dayMs));
      expect(await files.owner(documentId)).toBeNull();
      expect((await keys.get(session.id)).status).not.toBe('open');
      expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data).toMatchObject({
        status: 'cancelled',
        customerId: null,
        personalDataErasedAt: expect.any(String),
      });
    });

    it('erases by data subject the document images and data key of the sessions that ran an identity check it erased, the latest or an earlier one', async () => {
      const subject = sandboxPerson(READY_MADE_PEOPLE[1]);
      const session = await startWithDocuments();
      await consent(session);
      expect((await browser(session).call('POST', '/identity', { kind: 'nin', number: subject.nin })).status).toBe(200);
      // The person gives another number after it: the session's latest check is no longer the subject's.
      expect((await browser(session).call('POST', '/identity', { kind: 'nin', number: sandboxPerson(READY_MADE_PEOPLE[2]).nin })).status).toBe(200);
      expect((await browser(session).call('POST', '/documents', { document: 'drivers_licence', side: 'back', image: licenceBack })).status).toBe(200);
      const events = await app.eventStore.readStream(`verificationSession-${session.id}`, { direction: 'forwards', fromRevision: 0n, maxCount: 50 });
      const documentId = events.find((event) => event.type === 'VerificationSessionDocumentCaptured')?.data.documentId as string;
      const pool = app.app.get<symbol, pg.Pool>(PG_POOL);
      await waitUntil(
        async () =>
          (
            await pool.query<{ n: string }>(
              'select count(distinct s.reference) as n from verification_subjects s join verification_sessions vs on s.reference = any(vs.identity_references) where vs.id = $1',
              [session.id],
            )
          ).rows[0].n === '2',
        10_000,
        'the subject index',
      );

      const erased = await app.request('POST', '/v1/data-subjects/erasure', { body: { nin: subject.nin }, headers });
      expect(erased.status).toBe(200);
      expect(erased.body.data.references).toHaveLength(1);
      expect(await app.app.get(PortraitStore).owner(documentId)).toBeNull();
      expect((await app.app.get(DataKeys).get(session.id)).status).not.toBe('open');
      expect((await app.request('GET', `/v1/verification_sessions/${session.id}`, { headers })).body.data).toMatchObject({
        customerId: null,
        personalDataErasedAt: expect.any(String),
      });
    });
  });
});
