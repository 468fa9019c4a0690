import type pg from 'pg';

/** The `webhooks` subscriber's name: its checkpoint, which a write waits for before answering. */
export const WEBHOOKS_SUBSCRIBER = 'webhooks';

export interface EndpointRow {
  readonly id: string;
  readonly organization_id: string;
  readonly environment: 'test' | 'live';
  readonly target: string;
  readonly event_types: string[];
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly created_at: Date;
}

const ENDPOINT_COLUMNS = 'id, organization_id, environment, target, event_types, enabled, disabled_reason, created_at';

/**
 * An endpoint is gone once deleted, or once its organization was offboarded: its URL and secrets
 * were sealed under the organization's keys, which the offboarding destroyed.
 */
const STANDING = `deleted_at is null
  and not exists (select 1 from organization_keys o where o.organization_id = webhook_endpoints.organization_id and o.destroyed_at is not null)`;

export async function readEndpoint(pool: pg.Pool, endpointId: string): Promise<EndpointRow | undefined> {
  const { rows } = await pool.query<EndpointRow>(`select ${ENDPOINT_COLUMNS} from webhook_endpoints where id = $1 and ${STANDING}`, [endpointId]);
  return rows[0];
}

/** An organization's endpoints (of one environment, or both), oldest first; at most 100 (the limit on creation). */
export async function readEndpoints(pool: pg.Pool, organizationId: string, environment: string | null): Promise<EndpointRow[]> {
  const { rows } = await pool.query<EndpointRow>(
    `select ${ENDPOINT_COLUMNS} from webhook_endpoints where organization_id = $1 and ($2::text is null or environment = $2) and ${STANDING} order by created_at, id limit 100`,
    [organizationId, environment],
  );
  return rows;
}

export interface AttemptView {
  readonly attempt: number;
  readonly attemptedAt: string;
  readonly latencyMs: number;
  readonly statusCode: number | null;
  readonly outcome: 'succeeded' | 'failed';
  readonly errorCode: string | null;
  readonly responseExcerpt: string | null;
}

export interface DeliveryView {
  readonly id: string;
  readonly webhookId: string;
  readonly eventType: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly createdAt: string;
  readonly nextAttemptAt: string | null;
  readonly finishedAt: string | null;
  readonly attempts: AttemptView[];
}

/** An endpoint's deliveries, newest first, each with its attempts (at most the schedule's ten, and manual resends). */
export async function readDeliveries(pool: pg.Pool, endpointId: string, page: number, pageSize: number): Promise<{ total: number; deliveries: DeliveryView[] }> {
  const { rows: counted } = await pool.query<{ total: string }>('select count(*) as total from webhook_deliveries where endpoint_id = $1', [endpointId]);
  const { rows } = await pool.query<{
    id: string;
    message_id: string;
    event_type: string;
    status: DeliveryView['status'];
    created_at: Date;
    next_attempt_at: Date | null;
    finished_at: Date | null;
    attempts:
      | {
          attempt: number;
          attempted_at: string;
          latency_ms: number;
          status_code: number | null;
          outcome: 'succeeded' | 'failed';
          error_code: string | null;
          response_excerpt: string | null;
        }[]
      | null;
  }>(
    `select d.id, d.message_id, d.event_type, d.status, d.created_at, d.next_attempt_at, d.finished_at,
            (select json_agg(json_build_object('attempt', a.attempt, 'attempted_at', a.attempted_at, 'latency_ms', a.latency_ms, 'status_code', a.status_code,
                                               'outcome', a.outcome, 'error_code', a.error_code, 'response_excerpt', a.response_excerpt) order by a.attempt)
               from (select * from webhook_attempts where delivery_id = d.id order by attempt desc limit 50) a) as attempts
       from webhook_deliveries d where d.endpoint_id = $1 order by d.id desc limit $2 offset $3`,
    [endpointId, pageSize, (page - 1) * pageSize],
  );
  return {
    total: Number(counted[0].total),
    deliveries: rows.map((row) => ({
      id: String(row.id),
      webhookId: row.message_id,
      eventType: row.event_type,
      status: row.status,
      createdAt: row.created_at.toISOString(),
      nextAttemptAt: row.status === 'pending' && row.next_attempt_at !== null ? row.next_attempt_at.toISOString() : null,
      finishedAt: row.finished_at?.toISOString() ?? null,
      attempts: (row.attempts ?? []).map((attempt) => ({
        attempt: attempt.attempt,
        attemptedAt: new Date(attempt.attempted_at).toISOString(),
        latencyMs: attempt.latency_ms,
        statusCode: attempt.status_code,
        outcome: attempt.outcome,
        errorCode: attempt.error_code,
        responseExcerpt: attempt.response_excerpt,
      })),
    })),
  };
}
