import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { unzipSync } from 'fflate';
import pg from 'pg';
import { dataSubjectsProjection } from '../../projections/data-subjects/data-subjects.projection.js';
import { rebuildProjection } from '../../projections/rebuild/rebuild.js';
import { RetentionSweep } from '../../src/verifications/retention.js';
import { dataSubjectStreams } from '../../src/verifications/data-subject.events.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { streamEvents } from '../support/event-store.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

const DAY_MS = 86_400_000;
/** Events as text (positions are bigints), to look for personal data in them. */
const asText = (value: unknown) => JSON.stringify(value, (_key, field) => (typeof field === 'bigint' ? String(field) : field));

interface Tenant {
  readonly organizationId: string;
  readonly keyId: string;
  readonly key: string;
}

/**
 * Data subjects' rights over HTTP, on this project's event store: the export (JSON and ZIP, a
 * portrait included, a restricted key seeing only its scopes), holds stopping erasure (409 with the
 * reason) and the retention sweep until lifted, and the record of exports and erasures, which
 * carries no personal data.
 */
describe("Data subjects' rights", () => {
  let app: TestApp;
  let pool: pg.Pool;

  beforeAll(async () => {
    app = await startTestApp();
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await app?.close();
  });

  async function tenant(options: { retentionDays?: number } = {}): Promise<Tenant> {
    const { id } = await createOrganization(app, { approved: true });
    if (options.retentionDays !== undefined) expect((await app.admin('PUT', `/admin/v1/organizations/${id}/retention`, { retentionDays: options.retentionDays })).status).toBe(200);
    const issued = await issueKey(app, id);
    return { organizationId: id, keyId: issued.id, key: issued.key };
  }

  const as = (who: { key: string }) => ({ 'x-service-key': who.key });

  async function check(who: { key: string }, scope: string, body: Record<string, string>): Promise<Record<string, unknown>> {
    const response = await app.request('POST', `/v1/${scope}`, { body, headers: as(who) });
    expect(response.status).toBe(201);
    expect(response.body.data.status).toBe('found');
    return response.body.data;
  }

  /** The data of a verification without its portrait link (fresh on every read). */
  const withoutLink = (view: Record<string, unknown>) => {
    const { portraitUrl: _url, portraitUrlExpiresAt: _expires, ...result } = view.result as Record<string, unknown>;
    return { ...view, result };
  };

  it('exports every check of the subject as JSON (no-store), and as a ZIP with the portrait; a restricted key sees only its scopes; all recorded without personal data', async () => {
    const who = await tenant();
    const other = await tenant();
    const nin = '31440414976';
    const first = await check(who, 'nin', { nin });
    const second = await check(who, 'nin', { nin });
    await check(who, 'nin', { nin: '31440414986' });
    const portraitUrl = (first.result as Record<string, string>).portraitUrl;
    const fetched = await fetch(portraitUrl);
    const contentType = fetched.headers.get('content-type');
    const portrait = Buffer.from(await fetched.arrayBuffer());
    expect(portrait.length).toBeGreaterThan(0);

    const exported = await app.request('POST', '/v1/data-subjects/export', { body: { nin }, headers: as(who) });
    expect(exported.status).toBe(200);
    expect(exported.headers.get('cache-control')).toBe('no-store');
    const document = exported.body.data;
    expect(document.subject).toEqual({ kind: 'nin', maskedIdentifier: '***976' });
    expect(document.verifications.map((view: { reference: string }) => view.reference).sort()).toEqual([first.reference, second.reference].sort());
    for (const original of [first, second]) {
      const inExport = document.verifications.find((view: { reference: string }) => view.reference === original.reference);
      expect(withoutLink(inExport)).toEqual(withoutLink(original));
      expect((inExport.request as Record<string, string>).nin).toBe(nin);
    }
    expect(document.portraitFiles).toBeUndefined();

    // The ZIP: export.json and the portrait's very bytes.
    const zipped = await fetch(`${app.baseUrl}/v1/data-subjects/export`, {
      method: 'POST',
      headers: { ...as(who), 'content-type': 'application/json', accept: 'application/zip' },
      body: JSON.stringify({ nin }),
    });
    expect(zipped.status).toBe(200);
    expect(zipped.headers.get('content-type')).toBe('application/zip');
    expect(zipped.headers.get('cache-control')).toBe('no-store');
    const bytes = new Uint8Array(await zipped.arrayBuffer());
    expect(
      app.openApi?.check(
        { method: 'POST', url: '/v1/data-subjects/export', status: 200, contentType: zipped.headers.get('content-type'), text: '' },
        { unknownOperation: 'problem' },
      ),
    ).toEqual([]);
    const files = unzipSync(bytes);
    const inZip = JSON.parse(Buffer.from(files['export.json']).toString('utf8'));
    expect(inZip.verifications.map((view: { reference: string }) => view.reference).sort()).toEqual([first.reference, second.reference].sort());
    const portraitFile = inZip.portraitFiles.find((entry: { reference: string }) => entry.reference === first.reference);
    expect(portraitFile).toEqual({ reference: first.reference, file: `portraits/${first.reference}.${contentType === 'image/png' ? 'png' : 'jpg'}`, contentType });
    expect(Buffer.from(files[portraitFile.file]).equals(portrait)).toBe(true);

    // A key restricted to another scope finds none of the subject's nin checks; another organization neither.
    const restricted = await issueKey(app, who.organizationId, { scopes: ['bvn'] });
    const narrow = await app.request('POST', '/v1/data-subjects/export', { body: { nin }, headers: as(restricted) });
    expect(narrow.status).toBe(200);
    expect(narrow.body.data.verifications).toEqual([]);
    // Nor, in the earlier requests it lists, the references of checks it cannot see.
    expect(narrow.body.data.requests.length).toBeGreaterThan(0);
    expect(narrow.body.data.requests.flatMap((entry: { references: string[] }) => entry.references)).toEqual([]);
    const elsewhere = await app.request('POST', '/v1/data-subjects/export', { body: { nin }, headers: as(other) });
    expect(elsewhere.body.data.verifications).toEqual([]);

    // The record: both exports of this organization, masked, by reference; an erasure by reference too.
    expect((await app.request('POST', `/v1/verifications/${second.reference}/erasure`, { headers: as(who) })).status).toBe(200);
    const record = await app.request('GET', '/v1/data-subjects/requests?pageSize=100', { headers: as(who) });
    expect(record.status).toBe(200);
    expect(record.body.meta).toMatchObject({ total: 4, page: 1 });
    const [erasure, ...exports] = record.body.data;
    expect(erasure).toMatchObject({ type: 'erasure', subject: null, references: [second.reference], actor: { type: 'api_key', id: who.keyId } });
    expect(exports.map((entry: { format: string; subject: unknown }) => [entry.format, entry.subject])).toEqual(
      expect.arrayContaining([
        ['zip', { kind: 'nin', maskedIdentifier: '***976' }],
        ['json', { kind: 'nin', maskedIdentifier: '***976' }],
      ]),
    );
    const raw = JSON.stringify(record.body);
    expect(raw).not.toContain(nin);
    expect(raw).not.toContain('31440414986');

    // The restricted key reads the record without the other scope's references.
    const narrowRecord = await app.request('GET', '/v1/data-subjects/requests?pageSize=100', { headers: as(restricted) });
    expect(narrowRecord.body.meta.total).toBe(4);
    expect(narrowRecord.body.data.flatMap((entry: { references: string[] }) => entry.references)).toEqual([]);

    // A later export lists the earlier ones of this subject; the events written carry no identifier.
    const later = await app.request('POST', '/v1/data-subjects/export', { body: { nin }, headers: as(who) });
    expect(later.body.data.requests.filter((entry: { type: string }) => entry.type === 'export')).toHaveLength(3);
    expect(later.body.data.verifications.map((view: { reference: string }) => view.reference)).toEqual([first.reference]);
    const events = await streamEvents(app.eventStore, dataSubjectStreams.request(later.body.data.exportId));
    expect(events.map((event) => event.type)).toEqual(['DataSubjectExported']);
    expect(asText(events)).not.toContain(nin);

    // Operators see every organization's record.
    const all = await app.admin('GET', `/admin/v1/data-subject-requests?organizationId=${who.organizationId}&pageSize=100`);
    expect(all.status).toBe(200);
    expect(all.body.meta.total).toBe(5);
    expect(all.body.data.every((entry: { organizationId: string }) => entry.organizationId === who.organizationId)).toBe(true);
    expect(JSON.stringify(all.body)).not.toContain(nin);

    // The read model rebuilt from the log is the live one.
    const before = await app.request('GET', '/v1/data-subjects/requests?pageSize=100', { headers: as(who) });
    const result = await rebuildProjection(pool, app.eventStore, app.database.url, dataSubjectsProjection, { verify: true, strict: true });
    expect(result.outcome).toBe('swapped');
    const rebuilt = await app.request('GET', '/v1/data-subjects/requests?pageSize=100', { headers: as(who) });
    expect(rebuilt.body).toEqual(before.body);
    expect(rebuilt.body.meta.total).toBe(5);
  });

  it('a hold on a subject stops erasure by reference and by subject (409 legal_hold with its reason) and the retention sweep, until lifted', async () => {
    const who = await tenant({ retentionDays: 1 });
    const other = await tenant();
    const phone = '08061234575';
    const held = await check(who, 'phone', { phone });
    const free = await check(who, 'nin', { nin: '51440414976' });

    expect((await app.request('POST', '/v1/data-subjects/holds', { body: { subject: { phone }, reason: 'because' }, headers: as(who) })).status).toBe(422);
    expect(
      (await app.request('POST', '/v1/data-subjects/holds', { body: { subject: { phone }, reason: 'litigation', until: '2001-01-01T00:00:00Z' }, headers: as(who) })).status,
    ).toBe(422);
    const placed = await app.request('POST', '/v1/data-subjects/holds', { body: { subject: { phone: `+234${phone.slice(1)}` }, reason: 'aml_record_keeping' }, headers: as(who) });
    expect(placed.status).toBe(201);
    const hold = placed.body.data;
    expect(hold).toMatchObject({
      reference: null,
      subject: { kind: 'phone', maskedIdentifier: '***575' },
      reason: 'aml_record_keeping',
      until: null,
      inForce: true,
      placedBy: { type: 'api_key', id: who.keyId },
      liftedAt: null,
    });
    expect(JSON.stringify(placed.body)).not.toContain('8061234575');

    const refused = await app.request('POST', `/v1/verifications/${held.reference}/erasure`, { headers: as(who) });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('legal_hold');
    expect(refused.body.error.details).toEqual({ holdId: hold.id, reason: 'aml_record_keeping', until: null });
    const bySubject = await app.request('POST', '/v1/data-subjects/erasure', { body: { phone }, headers: as(who) });
    expect(bySubject.status).toBe(409);
    expect(bySubject.body.error.details.reason).toBe('aml_record_keeping');

    // Retention: the held check stays, the other check of the organization is erased. The sweep reads
    // the verifications read model: the key's list waits until it shows the key's own checks.
    expect((await app.request('GET', '/v1/verifications', { headers: as(who) })).status).toBe(200);
    const sweep = await app.app.get(RetentionSweep).runOnce(new Date(Date.now() + 2 * DAY_MS));
    expect(sweep.erased).toBeGreaterThanOrEqual(1);
    expect((await app.request('GET', `/v1/verifications/${free.reference}`, { headers: as(who) })).body.data.personalDataErasedAt).not.toBeNull();
    const stillThere = await app.request('GET', `/v1/verifications/${held.reference}`, { headers: as(who) });
    expect(stillThere.body.data.personalDataErasedAt).toBeNull();
    expect(stillThere.body.data.request).toEqual({ phone });

    // Only its organization lifts it; then erasure and retention apply again.
    expect((await app.request('POST', `/v1/data-subjects/holds/${hold.id}/lift`, { headers: as(other) })).status).toBe(404);
    const lifted = await app.request('POST', `/v1/data-subjects/holds/${hold.id}/lift`, { headers: as(who) });
    expect(lifted.status).toBe(200);
    expect(lifted.body.data).toMatchObject({ id: hold.id, inForce: false, liftedBy: { type: 'api_key', id: who.keyId } });
    expect((await app.request('POST', `/v1/data-subjects/holds/${hold.id}/lift`, { headers: as(who) })).body.data.liftedAt).toBe(lifted.body.data.liftedAt);
    const listed = await app.request('GET', '/v1/data-subjects/holds', { headers: as(who) });
    expect(listed.body.data).toEqual([lifted.body.data]);
    const again = await app.app.get(RetentionSweep).runOnce(new Date(Date.now() + 2 * DAY_MS));
    expect(again.erased).toBeGreaterThanOrEqual(1);
    expect((await app.request('GET', `/v1/verifications/${held.reference}`, { headers: as(who) })).body.data.personalDataErasedAt).not.toBeNull();
    const events = await streamEvents(app.eventStore, dataSubjectStreams.hold(hold.id));
    expect(events.map((event) => event.type)).toEqual(['DataHoldPlaced', 'DataHoldLifted']);
    expect(asText(events)).not.toContain('8061234575');
  });

  it("a hold on one check stops that check's erasure and its subject's; an operator's hold likewise, lifted by the operator", async () => {
    const who = await tenant();
    const nin = '61440414976';
    const held = await check(who, 'nin', { nin });
    const sibling = await check(who, 'nin', { nin: '61440414986' });

    const placed = await app.request('POST', '/v1/data-subjects/holds', {
      body: { reference: held.reference, reason: 'litigation', until: new Date(Date.now() + 30 * DAY_MS).toISOString() },
      headers: as(who),
    });
    expect(placed.status).toBe(201);
    expect(placed.body.data).toMatchObject({ reference: held.reference, subject: null, reason: 'litigation', inForce: true });
    const refused = await app.request('POST', `/v1/verifications/${held.reference}/erasure`, { headers: as(who) });
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toMatchObject({ holdId: placed.body.data.id, reason: 'litigation', until: placed.body.data.until });
    expect((await app.request('POST', '/v1/data-subjects/erasure', { body: { nin }, headers: as(who) })).status).toBe(409);
    // Another check is not held.
    expect((await app.request('POST', `/v1/verifications/${sibling.reference}/erasure`, { headers: as(who) })).status).toBe(200);
    expect((await app.request('POST', `/v1/data-subjects/holds/${placed.body.data.id}/lift`, { headers: as(who) })).status).toBe(200);

    const byOperator = await app.admin('POST', `/admin/v1/organizations/${who.organizationId}/holds`, { environment: 'test', subject: { nin }, reason: 'regulator_request' });
    expect(byOperator.status).toBe(201);
    expect(byOperator.body.data.placedBy.type).toBe('operator');
    const blocked = await app.request('POST', '/v1/data-subjects/erasure', { body: { nin }, headers: as(who) });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.details.reason).toBe('regulator_request');
    const allHolds = await app.admin('GET', '/admin/v1/holds?pageSize=100');
    expect(allHolds.body.data.some((entry: { id: string; organizationId: string }) => entry.id === byOperator.body.data.id && entry.organizationId === who.organizationId)).toBe(
      true,
    );
    expect((await app.admin('POST', `/admin/v1/holds/${byOperator.body.data.id}/lift`)).status).toBe(200);
    const erased = await app.request('POST', '/v1/data-subjects/erasure', { body: { nin }, headers: as(who) });
    expect(erased.status).toBe(200);
    expect(erased.body.data.references).toEqual([held.reference]);
  });
});
