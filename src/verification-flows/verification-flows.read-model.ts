import type pg from 'pg';
import { HOLD_ON_CHECK } from '../verifications/data-subject.read-model.js';

export const VERIFICATION_FLOWS_PROJECTION = 'verification_flows';
export const FLOWS_TABLE = 'verification_flows';
export const FLOW_VERSIONS_TABLE = 'verification_flow_versions';
export const SESSIONS_TABLE = 'verification_sessions';
export const LINKS_TABLE = 'verification_flow_links';

export interface FlowRow {
  readonly id: string;
  readonly organization_id: string;
  readonly environment: string;
  readonly version: number;
  readonly definition: string;
  readonly created_at: Date;
  readonly updated_at: Date;
}

export interface SessionRow {
  readonly id: string;
  readonly organization_id: string;
  readonly environment: string;
  readonly flow_id: string;
  readonly flow_version: number;
  readonly status: string;
  readonly customer: Record<string, unknown>;
  readonly identity_reference: string | null;
  readonly identity_outcome: string | null;
  readonly liveness: string | null;
  readonly documents: { document: string; side: string }[];
  readonly face_match_reference: string | null;
  readonly face_match_confidence: number | null;
  readonly reasons: string[];
  readonly expires_at: Date;
  readonly created_at: Date;
  readonly updated_at: Date;
  readonly submitted_at: Date | null;
  readonly decided_at: Date | null;
  readonly personal_data_erased_at: Date | null;
  readonly review_decision: string | null;
  readonly review_reason: string | null;
  readonly reviewed_by: string | null;
  readonly reviewed_at: Date | null;
}

const FLOW_COLUMNS = 'f.id, f.organization_id, f.environment, f.version, v.definition, f.created_at, f.updated_at';
const FLOW_JOIN = `${FLOWS_TABLE} f join ${FLOW_VERSIONS_TABLE} v on v.flow_id = f.id and v.version = f.version`;

export interface Owner {
  readonly organizationId: string;
  readonly environment: string;
}

/** One flow of `owner`, at its newest version, or undefined. */
export async function readFlow(pool: pg.Pool, owner: Owner, flowId: string): Promise<FlowRow | undefined> {
  const { rows } = await pool.query<FlowRow>(`select ${FLOW_COLUMNS} from ${FLOW_JOIN} where f.id = $1 and f.organization_id = $2 and f.environment = $3`, [
    flowId,
    owner.organizationId,
    owner.environment,
  ]);
  return rows[0];
}

/** A version's sealed definition, or undefined. */
export async function readFlowVersion(pool: pg.Pool, flowId: string, version: number): Promise<string | undefined> {
  const { rows } = await pool.query<{ definition: string }>(`select definition from ${FLOW_VERSIONS_TABLE} where flow_id = $1 and version = $2`, [flowId, version]);
  return rows[0]?.definition;
}

/** A page of `owner`'s flows, newest first. */
export async function readFlows(pool: pg.Pool, owner: Owner, page: number, pageSize: number): Promise<{ total: number; rows: FlowRow[] }> {
  const [count, list] = await Promise.all([
    pool.query<{ total: string }>(`select count(*) as total from ${FLOWS_TABLE} where organization_id = $1 and environment = $2`, [owner.organizationId, owner.environment]),
    pool.query<FlowRow>(`select ${FLOW_COLUMNS} from ${FLOW_JOIN} where f.organization_id = $1 and f.environment = $2 order by f.created_at desc, f.id desc limit $3 offset $4`, [
      owner.organizationId,
      owner.environment,
      pageSize,
      (page - 1) * pageSize,
    ]),
  ]);
  return { total: Number(count.rows[0]?.total ?? 0), rows: list.rows };
}

export async function readSession(pool: pg.Pool, owner: Owner, sessionId: string): Promise<SessionRow | undefined> {
  const { rows } = await pool.query<SessionRow>(`select * from ${SESSIONS_TABLE} where id = $1 and organization_id = $2 and environment = $3`, [
    sessionId,
    owner.organizationId,
    owner.environment,
  ]);
  return rows[0];
}

/** A session of any organization (an operator's read), or undefined. */
export async function readSessionAnyOwner(pool: pg.Pool, sessionId: string): Promise<SessionRow | undefined> {
  const { rows } = await pool.query<SessionRow>(`select * from ${SESSIONS_TABLE} where id = $1`, [sessionId]);
  return rows[0];
}

/** Every organization's sessions in review, oldest decision first (the operators' queue), a page at a time. */
export async function readSessionsInReview(pool: pg.Pool, page: number, pageSize: number): Promise<{ total: number; rows: SessionRow[] }> {
  const [count, list] = await Promise.all([
    pool.query<{ total: string }>(`select count(*) as total from ${SESSIONS_TABLE} where status = 'needs_review'`),
    pool.query<SessionRow>(`select * from ${SESSIONS_TABLE} where status = 'needs_review' order by decided_at, id limit $1 offset $2`, [pageSize, (page - 1) * pageSize]),
  ]);
  return { total: Number(count.rows[0]?.total ?? 0), rows: list.rows };
}

/** A flow's reusable links, newest first (a flow has at most MAX_FLOW_LINKS). */
export async function readLinks(pool: pg.Pool, owner: Owner, flowId: string): Promise<LinkRow[]> {
  const { rows } = await pool.query<LinkRow>(
    `select * from ${LINKS_TABLE} where flow_id = $1 and organization_id = $2 and environment = $3 order by created_at desc, id desc limit 100`,
    [flowId, owner.organizationId, owner.environment],
  );
  return rows;
}

/** A page of `owner`'s sessions, newest first; `status` and `flowId` filter. */
export async function readSessions(
  pool: pg.Pool,
  owner: Owner,
  filters: { readonly status?: string; readonly flowId?: string },
  page: number,
  pageSize: number,
): Promise<{ total: number; rows: SessionRow[] }> {
  const where = `organization_id = $1 and environment = $2 and ($3::text is null or status = $3) and ($4::text is null or flow_id = $4)`;
  const values = [owner.organizationId, owner.environment, filters.status ?? null, filters.flowId ?? null];
  const [count, list] = await Promise.all([
    pool.query<{ total: string }>(`select count(*) as total from ${SESSIONS_TABLE} where ${where}`, values),
    pool.query<SessionRow>(`select * from ${SESSIONS_TABLE} where ${where} order by created_at desc, id desc limit $5 offset $6`, [...values, pageSize, (page - 1) * pageSize]),
  ]);
  return { total: Number(count.rows[0]?.total ?? 0), rows: list.rows };
}

/** Open sessions past their time, oldest first, at most `limit` (the expiry sweep). */
export async function overdueSessions(pool: pg.Pool, now: Date, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `select id from ${SESSIONS_TABLE} where status in ('created', 'in_progress') and expires_at <= $1 order by expires_at limit $2`,
    [now, limit],
  );
  return rows.map((row) => row.id);
}

/** Sessions submitted before `before` and still undecided (the decision was cut short), oldest first, at most `limit`. */
export async function undecidedSessions(pool: pg.Pool, before: Date, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(`select id from ${SESSIONS_TABLE} where status = 'submitted' and submitted_at <= $1 order by submitted_at limit $2`, [
    before,
    limit,
  ]);
  return rows.map((row) => row.id);
}

/**
 * Ended sessions past their organization's retention period (else `defaultDays`), counted from the
 * session's creation, whose personal data is still there, oldest first, at most `limit`; a session
 * whose identity check is under a hold in force is left alone, as the check is.
 */
export async function sessionsPastRetention(pool: pg.Pool, now: Date, defaultDays: number, limit: number): Promise<{ id: string; organization_id: string; environment: string }[]> {
  const { rows } = await pool.query<{ id: string; organization_id: string; environment: string }>(
    `select vs.id, vs.organization_id, vs.environment from ${SESSIONS_TABLE} vs left join organizations o on o.id = vs.organization_id
     where vs.personal_data_erased_at is null and vs.status in ('approved', 'declined', 'needs_review', 'expired', 'cancelled')
       and vs.created_at < $1::timestamptz - make_interval(days => coalesce(o.retention_days, $2::int))
       and (vs.identity_reference is null or not exists (${HOLD_ON_CHECK('vs.identity_reference', 'vs.organization_id', 'vs.environment', '$1::timestamptz')}))
     order by vs.created_at limit $3`,
    [now, defaultDays, limit],
  );
  return rows;
}

/** `owner`'s sessions that ran one of `references` as an identity check, their personal data still there. */
export async function sessionsOfChecks(pool: pg.Pool, owner: Owner, references: readonly string[]): Promise<string[]> {
  if (references.length === 0) return [];
  const { rows } = await pool.query<{ id: string }>(
    `select id from ${SESSIONS_TABLE} where organization_id = $1 and environment = $2 and identity_references && $3::text[] and personal_data_erased_at is null order by id`,
    [owner.organizationId, owner.environment, references],
  );
  return rows.map((row) => row.id);
}

export interface LinkRow {
  readonly id: string;
  readonly flow_id: string;
  readonly organization_id: string;
  readonly environment: string;
  readonly key_id: string;
  readonly created_at: Date;
}

export async function readLink(pool: pg.Pool, linkId: string): Promise<LinkRow | undefined> {
  const { rows } = await pool.query<LinkRow>(`select * from ${LINKS_TABLE} where id = $1`, [linkId]);
  return rows[0];
}
