import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { issueKey } from '../support/fixtures.js';

const PASSWORD = 'correct horse battery staple';

/**
 * The console's Data requests routes: an owner reads the environment's record of exports and
 * erasures (the console's own erasure included, its user the actor) and its holds, and lifts one;
 * nothing personal in what they answer.
 */
describe('Console: data requests', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: '500000', DEFAULT_ACTIVE_SCOPES: 'nin,bvn' } });
  });

  afterAll(async () => {
    await app?.close();
  });

  it("lists the owner's exports, erasures and holds, masked, and lifts a hold; another organization's owner sees none of them", async () => {
    const client = new ConsoleClient(app);
    const signedUp = await client.signUpAndSignIn({ organizationName: 'Acme data', email: uniqueEmail('owner'), password: PASSWORD });
    expect(signedUp.status).toBe(200);
    const organizationId = signedUp.body.data.organization.id as string;
    const userId = signedUp.body.data.user.id as string;
    const { key } = await issueKey(app, organizationId);
    const headers = { 'x-service-key': key };
    const nin = '71440414976';
    const checked = await app.request('POST', '/v1/nin', { body: { nin }, headers });
    expect(checked.status).toBe(201);
    const other = await app.request('POST', '/v1/nin', { body: { nin: '71440414986' }, headers });
    expect((await app.request('POST', '/v1/data-subjects/export', { body: { nin }, headers })).status).toBe(200);
    const hold = await app.request('POST', '/v1/data-subjects/holds', { body: { subject: { nin }, reason: 'fraud_investigation' }, headers });
    expect(hold.status).toBe(201);

    // The console's erasure is refused while the hold stands, and recorded once made.
    const refused = await client.call('POST', `/console/api/verifications/${checked.body.data.reference}/erasure?environment=test`);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'legal_hold']);
    expect((await client.call('POST', `/console/api/verifications/${other.body.data.reference}/erasure?environment=test`)).status).toBe(200);

    const holds = await client.call('GET', '/console/api/data-subjects/holds?environment=test');
    expect(holds.status).toBe(200);
    expect(holds.body.data).toHaveLength(1);
    expect(holds.body.data[0]).toMatchObject({ id: hold.body.data.id, subject: { kind: 'nin', maskedIdentifier: '***976' }, inForce: true });
    const lifted = await client.call('POST', `/console/api/data-subjects/holds/${hold.body.data.id}/lift?environment=test`);
    expect(lifted.status).toBe(200);
    expect(lifted.body.data).toMatchObject({ inForce: false, liftedBy: { type: 'user', id: userId } });

    const record = await client.call('GET', '/console/api/data-subjects/requests?environment=test');
    expect(record.status).toBe(200);
    expect(record.body.data.map((entry: { type: string; actor: { type: string } }) => [entry.type, entry.actor.type])).toEqual([
      ['erasure', 'user'],
      ['export', 'api_key'],
    ]);
    expect(record.body.meta).toMatchObject({ total: 2 });
    const text = JSON.stringify([holds.body, record.body]);
    expect(text).not.toContain(nin);
    expect(text).not.toContain('71440414986');
    expect((await client.call('GET', '/console/api/data-subjects/requests?environment=live')).body.data).toEqual([]);

    const stranger = new ConsoleClient(app);
    expect((await stranger.signUpAndSignIn({ organizationName: 'Other', email: uniqueEmail('owner'), password: PASSWORD })).status).toBe(200);
    expect((await stranger.call('GET', '/console/api/data-subjects/requests?environment=test')).body.data).toEqual([]);
    expect((await stranger.call('POST', `/console/api/data-subjects/holds/${hold.body.data.id}/lift?environment=test`)).status).toBe(404);
  });
});
