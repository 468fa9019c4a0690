import { describe, expect, it } from '@jest/globals';
import { applyEvents, recorded, rowsOf, type GivenEvent, useProjectionDatabase } from '../../test/support/projection-harness.js';
import { dataSubjectsProjection } from './data-subjects.projection.js';

const holdId = 'hld_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const organizationId = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const t0 = new Date('2026-11-01T10:00:00Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000).toISOString();
const event = (streamId: string, type: string, data: Record<string, unknown>, minutes: number, actor = { type: 'api_key', id: 'key_1' }): GivenEvent => ({
  streamId,
  type,
  data: { schemaVersion: 1, ...data },
  metadata: { occurredAt: at(minutes), actor },
});
const placed = event(
  `dataHold-${holdId}`,
  'DataHoldPlaced',
  {
    holdId,
    organizationId,
    environment: 'test',
    reference: null,
    subjectKind: 'nin',
    maskedIdentifier: '***976',
    subjectToken: 'tok',
    reason: 'litigation',
    until: null,
    placedAt: at(0),
  },
  0,
);
const lifted = event(`dataHold-${holdId}`, 'DataHoldLifted', { holdId, liftedAt: at(5) }, 5, { type: 'operator', id: 'admin' });
const exported = event(
  'dataRequest-dsr_1',
  'DataSubjectExported',
  { requestId: 'dsr_1', organizationId, environment: 'test', subjectKind: 'nin', maskedIdentifier: '***976', subjectToken: 'tok', references: ['vrf_1'], format: 'zip', at: at(1) },
  1,
);
const erased = event(
  'dataRequest-dsr_2',
  'DataErasureRecorded',
  { requestId: 'dsr_2', organizationId, environment: 'live', subjectKind: null, maskedIdentifier: null, subjectToken: null, references: ['vrf_2'], pending: [], at: at(2) },
  2,
);

describe('data-subjects projection', () => {
  const db = useProjectionDatabase(dataSubjectsProjection);
  const when = (events: GivenEvent[]) => applyEvents(db.pool, dataSubjectsProjection, recorded(events));

  it('given a hold placed and lifted, then one row with who placed and who lifted it, and when', async () => {
    await when([placed, lifted]);
    const [row] = (await db.pool.query('select * from data_holds where id = $1', [holdId])).rows;
    expect(row).toMatchObject({
      organization_id: organizationId,
      subject_token: 'tok',
      reason: 'litigation',
      placed_by_type: 'api_key',
      placed_by_id: 'key_1',
      lifted_at: new Date(at(5)),
      lifted_by_type: 'operator',
    });
  });

  it('given an export and an erasure, then the record with their kinds, formats and actors', async () => {
    await when([exported, erased]);
    const rows = (await db.pool.query('select id, kind, format, "references", pending, actor_id, environment from data_requests order by id')).rows;
    expect(rows).toEqual([
      { id: 'dsr_1', kind: 'export', format: 'zip', references: ['vrf_1'], pending: [], actor_id: 'key_1', environment: 'test' },
      { id: 'dsr_2', kind: 'erasure', format: null, references: ['vrf_2'], pending: [], actor_id: 'key_1', environment: 'live' },
    ]);
  });

  it('replayed twice, same rows', async () => {
    const events = recorded([placed, exported, erased, lifted]);
    await applyEvents(db.pool, dataSubjectsProjection, events);
    const once = [await rowsOf(db.pool, 'data_holds', 'id'), await rowsOf(db.pool, 'data_requests', 'id')];
    await applyEvents(db.pool, dataSubjectsProjection, events);
    expect([await rowsOf(db.pool, 'data_holds', 'id'), await rowsOf(db.pool, 'data_requests', 'id')]).toEqual(once);
    expect(once.map((rows) => rows.length)).toEqual([1, 2]);
  });
});
