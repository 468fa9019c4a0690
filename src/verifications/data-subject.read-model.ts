import type pg from 'pg';
import { prepared } from '../database/prepared.js';

/** The `data-subjects` projection's name: its checkpoint, which a write waits for before answering. */
export const DATA_SUBJECTS_PROJECTION = 'data-subjects';
export const DATA_SUBJECTS_TABLES = ['data_holds', 'data_requests'] as const;

export interface HoldRow {
  readonly id: string;
  readonly organization_id: string;
  readonly environment: string;
  readonly reference: string | null;
  readonly subject_kind: string | null;
  readonly masked_identifier: string | null;
  readonly reason: string;
  readonly until: Date | null;
  readonly placed_at: Date;
  readonly placed_by_type: string;
  readonly placed_by_id: string;
  readonly lifted_at: Date | null;
  readonly lifted_by_type: string | null;
  readonly lifted_by_id: string | null;
}

const HOLD_COLUMNS =
  'h.id, h.organization_id, h.environment, h.reference, h.subject_kind, h.masked_identifier, h.reason, h.until, h.placed_at, h.placed_by_type, h.placed_by_id, h.lifted_at, h.lifted_by_type, h.lifted_by_id';

/**
 * The current token of the subject a row of `alias` (data_holds or data_requests) names: its token
 * in the log, or what a rotation of the index key re-tokenised it to (index-key-rotation.ts).
 */
const successorOf = (alias: string) =>
  `(select m.new_token from subject_token_successors m where m.organization_id = ${alias}.organization_id and m.old_token = ${alias}.subject_token)`;

/** A hold in force at `$2`: not lifted, and without an end or ending later. */
const IN_FORCE = 'h.lifted_at is null and (h.until is null or h.until > $2::timestamptz)';

/**
 * The holds in force on a check: on its reference, or on a data subject whose token indexes it
 * (an erased check has no tokens left, and nothing left to hold). SQL for retention's claim too.
 */
export const HOLD_ON_CHECK = (reference: string, organization: string, environment: string, at: string) =>
  `select 1 from data_holds h where h.lifted_at is null and (h.until is null or h.until > ${at})
     and h.organization_id = ${organization} and h.environment = ${environment}
     and (h.reference = ${reference} or exists (select 1 from verification_subjects s where s.reference = ${reference} and s.token in (h.subject_token, ${successorOf('h')})))`;

/** The first hold in force on any of `references` (of one organization and environment) or on any of `tokens`. */
export async function holdInForce(
  pool: pg.Pool,
  owner: { organizationId: string; environment: string },
  references: readonly string[],
  tokens: readonly string[],
  at: Date,
): Promise<HoldRow | undefined> {
  const { rows } = await pool.query<HoldRow>(
    prepared(
      `select ${HOLD_COLUMNS} from data_holds h where ${IN_FORCE} and h.organization_id = $1 and h.environment = $3
         and (h.reference = any($4::text[]) or h.subject_token = any($5::text[]) or ${successorOf('h')} = any($5::text[])
              or exists (select 1 from verification_subjects s where s.reference = any($4::text[]) and s.organization_id = $1 and s.token in (h.subject_token, ${successorOf('h')})))
       order by h.placed_at, h.id limit 1`,
      [owner.organizationId, at, owner.environment, references, tokens],
    ),
  );
  return rows[0];
}

export async function readHold(pool: pg.Pool, holdId: string): Promise<HoldRow | undefined> {
  const { rows } = await pool.query<HoldRow>(`select ${HOLD_COLUMNS} from data_holds h where h.id = $1`, [holdId]);
  return rows[0];
}

/** A page of holds (of one organization and environment, or of all for operators), most recent first. */
export async function readHolds(
  pool: pg.Pool,
  owner: { organizationId: string; environment: string } | null,
  page: number,
  pageSize: number,
): Promise<{ rows: HoldRow[]; total: number }> {
  const where = owner === null ? 'true' : 'h.organization_id = $3 and h.environment = $4';
  const params = owner === null ? [pageSize, (page - 1) * pageSize] : [pageSize, (page - 1) * pageSize, owner.organizationId, owner.environment];
  const [{ rows }, counted] = await Promise.all([
    pool.query<HoldRow>(`select ${HOLD_COLUMNS} from data_holds h where ${where} order by h.placed_at desc, h.id desc limit $1 offset $2`, params),
    pool.query<{ total: string }>(
      `select count(*) as total from data_holds h where ${owner === null ? 'true' : 'h.organization_id = $1 and h.environment = $2'}`,
      owner === null ? [] : [owner.organizationId, owner.environment],
    ),
  ]);
  return { rows, total: Number(counted.rows[0].total) };
}

export interface RequestRow {
  readonly id: string;
  readonly organization_id: string;
  readonly environment: string;
  readonly kind: 'export' | 'erasure';
  readonly subject_kind: string | null;
  readonly masked_identifier: string | null;
  readonly references: string[];
  readonly pending: string[];
  readonly format: string | null;
  readonly actor_type: string;
  readonly actor_id: string;
  readonly at: Date;
}

const REQUEST_COLUMNS = 'id, organization_id, environment, kind, subject_kind, masked_identifier, "references", pending, format, actor_type, actor_id, at';

/** A page of the record (of one organization and environment, of one organization, or of all), most recent first. */
export async function readRequests(
  pool: pg.Pool,
  filter: { organizationId?: string; environment?: string },
  page: number,
  pageSize: number,
): Promise<{ rows: RequestRow[]; total: number }> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (filter.organizationId !== undefined) conditions.push(`organization_id = $${params.push(filter.organizationId)}`);
  if (filter.environment !== undefined) conditions.push(`environment = $${params.push(filter.environment)}`);
  const where = conditions.length === 0 ? 'true' : conditions.join(' and ');
  const [{ rows }, counted] = await Promise.all([
    pool.query<RequestRow>(`select ${REQUEST_COLUMNS} from data_requests where ${where} order by at desc, id desc limit $${params.length + 1} offset $${params.length + 2}`, [
      ...params,
      pageSize,
      (page - 1) * pageSize,
    ]),
    pool.query<{ total: string }>(`select count(*) as total from data_requests where ${where}`, params),
  ]);
  return { rows, total: Number(counted.rows[0].total) };
}

/** The record's entries of one data subject (by its tokens), most recent first, at most 500. */
export async function readRequestsOfSubject(pool: pg.Pool, owner: { organizationId: string; environment: string }, tokens: readonly string[]): Promise<RequestRow[]> {
  const { rows } = await pool.query<RequestRow>(
    `select ${REQUEST_COLUMNS} from data_requests r where organization_id = $1 and environment = $2 and (subject_token = any($3::text[]) or ${successorOf('r')} = any($3::text[]))
     order by at desc, id desc limit 500`,
    [owner.organizationId, owner.environment, tokens],
  );
  return rows;
}

/** The holds (in force or not) on a data subject (by its tokens) or on any of `references`, most recent first. */
export async function readHoldsOf(
  pool: pg.Pool,
  owner: { organizationId: string; environment: string },
  tokens: readonly string[],
  references: readonly string[],
): Promise<HoldRow[]> {
  const { rows } = await pool.query<HoldRow>(
    `select ${HOLD_COLUMNS} from data_holds h where h.organization_id = $1 and h.environment = $2
       and (h.subject_token = any($3::text[]) or ${successorOf('h')} = any($3::text[]) or h.reference = any($4::text[])) order by h.placed_at desc, h.id desc limit 500`,
    [owner.organizationId, owner.environment, tokens, references],
  );
  return rows;
}
