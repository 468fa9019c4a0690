import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

/** Sandbox inputs that are found (last digit neither 1, 2, 3 nor 4), used by no other check here. */
const NIN = '41440414976';
const BVN = '22150292236';

/**
 * A key restricted to some scopes reads, lists, searches and erases only checks of those scopes:
 * every other check of its organization is, to it, a check that does not exist (404, absent from
 * lists and searches), while an unrestricted key of the same organization still sees it whole.
 */
describe('A key restricted to some scopes', () => {
  let app: TestApp;
  let full: { id: string; key: string };
  let ninOnly: { id: string; key: string };
  let ninCheck: string;
  let bvnCheck: string;

  const as = (who: { key: string }) => ({ 'x-service-key': who.key });

  beforeAll(async () => {
    app = await startTestApp();
    const { id } = await createOrganization(app, { approved: true });
    full = await issueKey(app, id);
    ninOnly = await issueKey(app, id, { scopes: ['nin'] });
    const nin = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers: as(full) });
    const bvn = await app.request('POST', '/v1/bvn', { body: { bvn: BVN }, headers: as(full) });
    expect([nin.status, bvn.status]).toEqual([201, 201]);
    ninCheck = nin.body.data.reference;
    bvnCheck = bvn.body.data.reference;
    // The unrestricted key's list waits for its own checks: both are in the read model from here on.
    const listed = await app.request('GET', '/v1/verifications', { headers: as(full) });
    expect(listed.body.data.map((summary: { reference: string }) => summary.reference).sort()).toEqual([ninCheck, bvnCheck].sort());
  });

  afterAll(async () => {
    await app?.close();
  });

  it('reads a check of its scopes, and a check of another scope is not found', async () => {
    expect((await app.request('GET', `/v1/verifications/${ninCheck}`, { headers: as(ninOnly) })).status).toBe(200);
    const other = await app.request('GET', `/v1/verifications/${bvnCheck}`, { headers: as(ninOnly) });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
    expect(JSON.stringify(other.body)).not.toContain(BVN);
  });

  it('lists and counts only checks of its scopes, even when filtering by another scope', async () => {
    const all = await app.request('GET', '/v1/verifications', { headers: as(ninOnly) });
    expect(all.status).toBe(200);
    expect(all.body.data.map((summary: { reference: string }) => summary.reference)).toEqual([ninCheck]);
    expect(all.body.meta.total).toBe(1);
    const bvns = await app.request('GET', '/v1/verifications?scope=bvn', { headers: as(ninOnly) });
    expect(bvns.status).toBe(200);
    expect(bvns.body.data).toEqual([]);
    expect(bvns.body.meta.total).toBe(0);
  });

  it('finds a data subject only in checks of its scopes', async () => {
    const byBvn = await app.request('POST', '/v1/data-subjects/search', { body: { bvn: BVN }, headers: as(ninOnly) });
    expect(byBvn.status).toBe(200);
    expect(byBvn.body.data.references).toEqual([]);
    const byNin = await app.request('POST', '/v1/data-subjects/search', { body: { nin: NIN }, headers: as(ninOnly) });
    expect(byNin.body.data.references).toEqual([ninCheck]);
    const unrestricted = await app.request('POST', '/v1/data-subjects/search', { body: { bvn: BVN }, headers: as(full) });
    expect(unrestricted.body.data.references).toEqual([bvnCheck]);
  });

  it('cannot erase a check of another scope, by reference or by data subject', async () => {
    const byReference = await app.request('POST', `/v1/verifications/${bvnCheck}/erasure`, { headers: as(ninOnly) });
    expect(byReference.status).toBe(404);
    const bySubject = await app.request('POST', '/v1/data-subjects/erasure', { body: { bvn: BVN }, headers: as(ninOnly) });
    expect(bySubject.status).toBe(200);
    expect(bySubject.body.data).toEqual({ references: [], pending: [] });
    const still = await app.request('GET', `/v1/verifications/${bvnCheck}`, { headers: as(full) });
    expect(still.body.data.personalDataErasedAt).toBeNull();
    expect(still.body.data.request).toEqual({ bvn: BVN });
  });

  it('erases a check of its own scopes', async () => {
    const erased = await app.request('POST', `/v1/verifications/${ninCheck}/erasure`, { headers: as(ninOnly) });
    expect(erased.status).toBe(200);
    expect(erased.body.data.personalDataErasedAt).toEqual(expect.any(String));
  });
});
