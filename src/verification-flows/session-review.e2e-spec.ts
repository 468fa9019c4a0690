import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import type pg from 'pg';
import { waitUntil } from '../../projections/runner/counting.projection.testing.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { ConsoleClient, uniqueEmail } from '../../test/support/console-client.js';
import { streamEvents } from '../../test/support/event-store.js';
import { cutSample, toJpeg } from '../../test/support/sample-faces.js';
import { PG_POOL } from '../database/pool.js';
import { READY_MADE_PEOPLE, sandboxPerson } from '../scopes/sandbox-world.js';

const PASSWORD = 'correct horse battery';
/** Every face match falls within the margin below a threshold of 100: each submitted session goes to review. */
const FLOW = {
  name: 'Review everything',
  steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin', 'bvn'] }, { type: 'selfie' }],
  decision: { faceMatchThreshold: 100, reviewMarginPoints: 100, liveness: 'off' },
  branding: { displayName: 'Acme Bank', colour: '#1c7ed6', logoUrl: null },
  allowedOrigins: [],
  redirectUrl: null,
};
const person = sandboxPerson(READY_MADE_PEOPLE[0]);
const selfieBase64 = () => Buffer.from(toJpeg(cutSample('authorWebcam'))).toString('base64');

/**
 * The console's flows and sessions pages' API and the review of a session in needs_review: by the
 * organization's owner, by an operator in the operators' console and through the admin API; over
 * HTTP, the console's answers checked against its OpenAPI document.
 */
describe('Console and admin API: flows, sessions and the review of a session in needs_review', () => {
  let app: TestApp;
  let pool: pg.Pool;
  let owner: ConsoleClient;
  let developer: ConsoleClient;
  let finance: ConsoleClient;
  let operator: ConsoleClient;
  let headers: Record<string, string>;
  let flowId: string;

  async function linkFor(to: string, subject: RegExp): Promise<string> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const mailbox = await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox');
      const mail = mailbox.body.data.find((m: { to: string; subject: string }) => m.to === to && subject.test(m.subject));
      if (mail !== undefined) return new URL(mail.link).searchParams.get('token') as string;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no mail to ${to} matching ${subject}`);
  }

  async function member(role: 'developer' | 'finance'): Promise<ConsoleClient> {
    const email = uniqueEmail(role);
    expect((await owner.call('POST', '/console/api/team/invitations', { email, role })).status).toBe(201);
    const token = await linkFor(email, /invited/);
    const client = new ConsoleClient(app);
    await client.session();
    expect((await client.call('POST', '/console/api/invitations/accept', { token, password: PASSWORD })).status).toBe(201);
    return client;
  }

  beforeAll(async () => {
    app = await startTestApp({
      embedded: true,
      env: { SANDBOX_CREDIT_KOBO: '5000000', DEFAULT_ACTIVE_SCOPES: 'nin,bvn,face_match', CONSOLE_MAIL_REQUESTS_PER_HOUR: '1000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    });
    pool = app.app.get<symbol, pg.Pool>(PG_POOL);
    owner = new ConsoleClient(app);
    expect((await owner.signUpAndSignIn({ organizationName: 'Acme review', email: uniqueEmail('owner'), password: PASSWORD })).status).toBe(200);
    developer = await member('developer');
    finance = await member('finance');
    const issued = await owner.call('POST', '/console/api/keys', { environment: 'test', name: 'backend' });
    expect(issued.status).toBe(201);
    headers = { 'x-service-key': issued.body.data.key as string };
    // A receiver that is never reached: the delivery rows are what the tests read.
    expect((await app.request('POST', '/v1/webhook_endpoints', { body: { url: 'http://127.0.0.1:9/hooks', eventTypes: [] }, headers })).status).toBe(201);

    operator = new ConsoleClient(app);
    await operator.session();
    expect((await operator.call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email: uniqueEmail('operator'), password: PASSWORD })).status).toBe(201);
    const setup = await operator.call('POST', '/console/api/operator/totp/setup');
    expect((await operator.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret: setup.body.data.secret }) })).status).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
  });

  /** A session of the flow started by the API and taken by its client secret through consent, NIN, selfie and submission: to review. */
  async function inReview(): Promise<string> {
    const created = await app.request('POST', '/v1/verification_sessions', { body: { flowId, customerId: 'cus_review_7781' }, headers });
    expect(created.status).toBe(201);
    const { id, clientSecret } = created.body.data as { id: string; clientSecret: string };
    const call = (method: string, path: string, body?: unknown) =>
      app.request(method, `/verify/api/sessions/${id}${path}`, { body, headers: { authorization: `Bearer ${clientSecret}` } });
    const shown = await call('GET', '');
    const { textVersion, textHash } = shown.body.data.consent as { textVersion: number; textHash: string };
    expect((await call('POST', '/consent', { textVersion, textHash })).status).toBe(200);
    expect((await call('POST', '/identity', { kind: 'nin', number: person.nin })).status).toBe(200);
    expect((await call('POST', '/selfie', { image: selfieBase64() })).status).toBe(200);
    expect((await call('POST', '/submit')).status).toBe(200);
    expect((await app.request('GET', `/v1/verification_sessions/${id}`, { headers })).body.data.status).toBe('needs_review');
    return id;
  }

  const delivered = (type: string, sessionId: string) =>
    waitUntil(
      async () => (await pool.query(`select 1 from webhook_deliveries where event_type = $1 and body like $2`, [type, `%${sessionId}%`])).rowCount === 1,
      20_000,
      `the ${type} delivery`,
    );

  it('creates a flow and its next version through the same rules as the API, with its field errors; lists it and its links; finance is refused', async () => {
    const invalid = await owner.call('POST', '/console/api/verification_flows?environment=test', {
      ...FLOW,
      steps: [{ type: 'selfie' }],
      branding: { ...FLOW.branding, colour: 'blue' },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.fields.map((field: { field: string }) => field.field)).toEqual(['steps', 'steps', 'branding.colour']);
    const created = await owner.call('POST', '/console/api/verification_flows?environment=test', FLOW);
    expect(created.status).toBe(201);
    flowId = created.body.data.id;
    // The API sees the console's flow: one definition, one store.
    expect((await app.request('GET', `/v1/verification_flows/${flowId}`, { headers })).body.data).toMatchObject({ name: 'Review everything', version: 1 });
    const next = await developer.call('POST', `/console/api/verification_flows/${flowId}/versions?environment=test`, { ...FLOW, sessionLifetimeSeconds: 900 });
    expect(next.status).toBe(201);
    expect(next.body.data).toMatchObject({ version: 2, sessionLifetimeSeconds: 900 });
    expect((await owner.call('GET', `/console/api/verification_flows/${flowId}?environment=live`)).status).toBe(404);

    const link = await owner.call('POST', `/console/api/verification_flows/${flowId}/links?environment=test`, {});
    expect(link.status).toBe(201);
    expect(link.body.data.url).toBe(`${app.baseUrl}/verify/start/${link.body.data.id}`);
    const links = await developer.call('GET', `/console/api/verification_flows/${flowId}/links?environment=test`);
    expect(links.body.data.map((each: { id: string }) => each.id)).toEqual([link.body.data.id]);
    expect((await developer.call('GET', '/console/api/verification_flows?environment=test')).body.meta.total).toBe(1);

    for (const path of ['/console/api/verification_flows', '/console/api/verification_sessions', `/console/api/verification_flows/${flowId}/links`]) {
      const refused = await finance.call('GET', `${path}?environment=test`);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('forbidden_role');
    }
    expect((await finance.call('POST', '/console/api/verification_flows?environment=test', FLOW)).status).toBe(403);
  });

  it('lets the owner see the evidence and approve a session in review; developer and finance are refused; the approval is an event, read and announced', async () => {
    const sessionId = await inReview();
    const listed = await developer.call('GET', '/console/api/verification_sessions?environment=test&status=needs_review&pageSize=5');
    expect(listed.body.data.map((session: { id: string }) => session.id)).toContain(sessionId);
    expect(listed.body.meta).toMatchObject({ page: 1, pageSize: 5 });
    expect((await developer.call('GET', '/console/api/verification_sessions?environment=test&status=approved')).body.data).toEqual([]);

    const page = await developer.call('GET', `/console/api/verification_sessions/${sessionId}?environment=test`);
    expect(page.status).toBe(200);
    expect(page.body.data).toMatchObject({
      identityKind: 'nin',
      selfie: true,
      portraitUrl: expect.stringContaining('/v1/portraits/prt_'),
      session: { status: 'needs_review', decision: { reasons: ['face_match_close'], review: null } },
      reviewReasons: { approved: expect.arrayContaining(['faces_match']) },
    });
    expect(page.body.data.history.map((step: { step: string }) => step.step)).toEqual(['created', 'consent_given', 'identity_checked', 'selfie_captured', 'submitted', 'decided']);
    expect(JSON.stringify(page.body.data.history)).not.toContain(person.nin);

    for (const client of [developer, finance]) {
      const refusedSelfie = await client.call('GET', `/console/api/verification_sessions/${sessionId}/selfie?environment=test`);
      expect(refusedSelfie.status).toBe(403);
      const refused = await client.call('POST', `/console/api/verification_sessions/${sessionId}/review?environment=test`, { decision: 'approved', reason: 'faces_match' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('forbidden_role');
    }
    const selfie = await fetch(`${app.baseUrl}/console/api/verification_sessions/${sessionId}/selfie?environment=test`, {
      headers: { cookie: [...owner.cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    expect(selfie.status).toBe(200);
    expect(selfie.headers.get('content-type')).toBe('image/jpeg');
    expect(selfie.headers.get('cache-control')).toBe('no-store');
    expect([...new Uint8Array(await selfie.arrayBuffer()).slice(0, 2)]).toEqual([0xff, 0xd8]);
    expect((await fetch(`${app.baseUrl}/console/api/verification_sessions/${sessionId}/selfie?environment=test`)).status).toBe(401);

    const freeText = await owner.call('POST', `/console/api/verification_sessions/${sessionId}/review?environment=test`, { decision: 'approved', reason: 'looks like Ada to me' });
    expect(freeText.status).toBe(422);
    expect(freeText.body.error.details.fields.map((field: { field: string }) => field.field)).toEqual(['reason']);
    const otherDecisionsReason = await owner.call('POST', `/console/api/verification_sessions/${sessionId}/review?environment=test`, {
      decision: 'approved',
      reason: 'faces_differ',
    });
    expect(otherDecisionsReason.status).toBe(422);

    const approved = await owner.call('POST', `/console/api/verification_sessions/${sessionId}/review?environment=test`, { decision: 'approved', reason: 'faces_match' });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({
      status: 'approved',
      decision: { reasons: ['face_match_close'], review: { decision: 'approved', reason: 'faces_match', reviewedBy: 'organization' } },
    });
    const events = await streamEvents(app.eventStore, `verificationSession-${sessionId}`);
    expect(events.at(-1)).toMatchObject({ type: 'VerificationSessionReviewed', data: { decision: 'approved', reason: 'faces_match' }, metadata: { actor: { type: 'user' } } });
    expect((await app.request('GET', `/v1/verification_sessions/${sessionId}`, { headers })).body.data).toMatchObject({
      status: 'approved',
      decision: { review: { reason: 'faces_match' } },
    });

    const again = await owner.call('POST', `/console/api/verification_sessions/${sessionId}/review?environment=test`, { decision: 'declined', reason: 'faces_differ' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('session_not_in_review');

    await delivered('verification_session.approved', sessionId);
    const body = (await pool.query<{ body: string }>(`select body from webhook_deliveries where event_type = 'verification_session.approved' and body like $1`, [`%${sessionId}%`]))
      .rows[0].body;
    expect(JSON.parse(body).data).toEqual({
      sessionId,
      organizationId: expect.any(String),
      environment: 'test',
      reasons: [],
      review: { reason: 'faces_match', reviewedBy: 'organization' },
    });
    expect(body).not.toContain('cus_review_7781');
  });

  it('refuses a decision on a session not in review (409) and on an erased one', async () => {
    const open = await app.request('POST', '/v1/verification_sessions', { body: { flowId, customerId: 'cus_open' }, headers });
    const early = await owner.call('POST', `/console/api/verification_sessions/${open.body.data.id}/review?environment=test`, { decision: 'approved', reason: 'faces_match' });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('session_not_in_review');

    const sessionId = await inReview();
    expect((await app.request('POST', `/v1/verification_sessions/${sessionId}/erase`, { headers })).status).toBe(200);
    const erased = await owner.call('POST', `/console/api/verification_sessions/${sessionId}/review?environment=test`, { decision: 'approved', reason: 'faces_match' });
    expect(erased.status).toBe(403);
    expect(erased.body.error.code).toBe('personal_data_destroyed');
    expect((await owner.call('GET', `/console/api/verification_sessions/${sessionId}?environment=test`)).body.data).toMatchObject({ selfie: false, portraitUrl: null });
    expect((await owner.call('GET', `/console/api/verification_sessions/${sessionId}/selfie?environment=test`)).status).toBe(404);
    expect((await app.request('GET', `/v1/verification_sessions/${sessionId}`, { headers })).body.data.status).toBe('needs_review');
  });

  it("lets an operator find it in the queue, see the evidence without the integrator's customer id, and decline it; the admin API decides another", async () => {
    const sessionId = await inReview();
    const queue = await operator.call('GET', '/console/api/operator/verification_sessions/in_review?pageSize=100');
    expect(queue.status).toBe(200);
    expect(queue.body.data.find((session: { id: string }) => session.id === sessionId)).toMatchObject({ reasons: ['face_match_close'], environment: 'test' });
    const review = await operator.call('GET', `/console/api/operator/verification_sessions/${sessionId}`);
    expect(review.body.data).toMatchObject({ selfie: true, session: { customerId: null, metadata: null, status: 'needs_review' } });
    expect(JSON.stringify(review.body)).not.toContain('cus_review_7781');
    const selfie = await fetch(`${app.baseUrl}/console/api/operator/verification_sessions/${sessionId}/selfie`, {
      headers: { cookie: [...operator.cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    expect(selfie.status).toBe(200);
    expect(selfie.headers.get('cache-control')).toBe('no-store');
    // An integrator's session is not the operators' console's: the owner's cookie opens none of it.
    expect((await owner.call('GET', `/console/api/operator/verification_sessions/${sessionId}`)).status).toBe(403);

    const declined = await operator.call('POST', `/console/api/operator/verification_sessions/${sessionId}/review`, { decision: 'declined', reason: 'suspected_spoof' });
    expect(declined.status).toBe(200);
    expect(declined.body.data).toMatchObject({ status: 'declined', decision: { review: { decision: 'declined', reason: 'suspected_spoof', reviewedBy: 'operator' } } });
    await delivered('verification_session.declined', sessionId);
    const queued = await operator.call('GET', '/console/api/operator/verification_sessions/in_review?pageSize=100');
    expect(queued.body.data.map((session: { id: string }) => session.id)).not.toContain(sessionId);

    const another = await inReview();
    expect((await app.request('POST', `/admin/v1/verification_sessions/${another}/review`, { body: { decision: 'approved', reason: 'faces_match' } })).status).toBe(401);
    expect((await app.admin('GET', `/admin/v1/verification_sessions/${another}/review`)).body.data).toMatchObject({ selfie: true, session: { status: 'needs_review' } });
    const decided = await app.admin('POST', `/admin/v1/verification_sessions/${another}/review`, { decision: 'approved', reason: 'identity_confirmed_otherwise' });
    expect(decided.status).toBe(200);
    expect(decided.body.data).toMatchObject({ status: 'approved', decision: { review: { reviewedBy: 'operator', reason: 'identity_confirmed_otherwise' } } });
    expect((await app.admin('POST', `/admin/v1/verification_sessions/${another}/review`, { decision: 'approved', reason: 'faces_match' })).status).toBe(409);
    await delivered('verification_session.approved', another);
  });
});
