import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { EventStore, JsonObject } from '../../src/event-store/event-store.port.js';

/**
 * A realistic event log written straight into the PostgreSQL `events` table (tests and the
 * benchmark): organizations registered, approved, keyed and funded, then verifications, each
 * requested, reserved, completed (80 %) or failed (20 %), and debited or released.
 * Positions are consecutive from just above the current maximum: below every position the
 * adapter will hand out later, and visible at once. On any other store (options.store, EventStoreDB)
 * the same log is appended through the port instead, in the same order.
 */
export interface SampleLogOptions {
  readonly organizations: number;
  readonly verifications: number;
  /** Rows per INSERT. */
  readonly chunk?: number;
  readonly onProgress?: (eventsWritten: number) => void;
  /** The event store in use: when it is not PostgreSQL, events are appended through it. */
  readonly store?: EventStore;
}

interface Row {
  streamId: string;
  revision: number;
  type: string;
  data: Record<string, unknown>;
  occurredAt: string;
}

const SCOPES = ['nin', 'bvn', 'phone', 'bank_account'] as const;
const PRICES: Record<(typeof SCOPES)[number], number> = { nin: 10_000, bvn: 10_000, phone: 7_500, bank_account: 5_000 };

export async function writeSampleLog(pool: pg.Pool, options: SampleLogOptions): Promise<{ events: number; lastPosition: bigint }> {
  const store = options.store?.kind === 'postgres' ? undefined : options.store;
  const chunk = options.chunk ?? 10_000;
  let position = 0n;
  if (store === undefined) {
    const { rows } = await pool.query<{ max: string | null }>('select max(position) as max from events');
    position = BigInt(rows[0].max ?? '0');
  }
  const revisions = new Map<string, number>();
  const startMs = Date.parse('2026-01-01T00:00:00Z');
  let clockMs = startMs;
  let buffer: Row[] = [];
  let written = 0;

  const appendThroughStore = async (port: EventStore) => {
    // Consecutive events of one stream go in one append, in log order.
    for (let start = 0; start < buffer.length; ) {
      let end = start + 1;
      while (end < buffer.length && buffer[end].streamId === buffer[start].streamId) end++;
      const run = buffer.slice(start, end);
      const result = await port.append(
        run[0].streamId,
        run.map((row) => ({
          id: randomUUID(),
          type: row.type,
          data: row.data as JsonObject,
          metadata: { correlationId: randomUUID(), causationId: null, actor: { type: 'system', id: 'bench' }, occurredAt: row.occurredAt },
        })),
        { expectedRevision: run[0].revision === 0 ? 'no_stream' : BigInt(run[0].revision - 1) },
      );
      position = result.position;
      start = end;
    }
  };
  const flush = async () => {
    if (buffer.length === 0) return;
    if (store !== undefined) {
      await appendThroughStore(store);
      written += buffer.length;
      buffer = [];
      options.onProgress?.(written);
      return;
    }
    const positions: string[] = [];
    for (let i = 0; i < buffer.length; i++) positions.push((position + BigInt(i + 1)).toString());
    position += BigInt(buffer.length);
    await pool.query(
      `insert into events (position, stream_id, revision, event_id, type, data, metadata, created_at)
       select p, s, r, gen_random_uuid(), t, d, jsonb_build_object('correlationId', gen_random_uuid()::text, 'causationId', null, 'actor', jsonb_build_object('type', 'system', 'id', 'bench'), 'occurredAt', o), o::timestamptz
       from unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[], $6::text[]) as e(p, s, r, t, d, o)`,
      [positions, buffer.map((row) => row.streamId), buffer.map((row) => row.revision), buffer.map((row) => row.type), buffer.map((row) => JSON.stringify(row.data)), buffer.map((row) => row.occurredAt)],
    );
    written += buffer.length;
    buffer = [];
    options.onProgress?.(written);
  };
  const push = async (streamId: string, type: string, data: Record<string, unknown>) => {
    const revision = revisions.get(streamId) ?? 0;
    revisions.set(streamId, revision + 1);
    clockMs += 7;
    buffer.push({ streamId, revision, type, data: { schemaVersion: 1, ...data }, occurredAt: new Date(clockMs).toISOString() });
    if (buffer.length >= chunk) await flush();
  };

  const organizations = Array.from({ length: options.organizations }, (_, index) => `org_${String(index).padStart(6, '0')}_${randomUUID().slice(0, 8)}`);
  for (const organizationId of organizations) {
    const stream = `organization-${organizationId}`;
    await push(stream, 'OrganizationRegistered', { organizationId, name: `Org ${organizationId}`, email: `ops@${organizationId}.example`, activeScopes: [...SCOPES] });
    await push(stream, 'OrganizationApproved', { organizationId });
    const keyId = `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    await push(stream, 'ApiKeyIssued', {
      organizationId,
      keyId,
      name: 'bench',
      keyHash: randomUUID().replaceAll('-', '') + randomUUID().replaceAll('-', ''),
      prefix: 'service_test_abcd',
      last4: 'wxyz',
      environment: 'test',
      scopes: null,
    });
    await push(`wallet-${organizationId}.test`, 'WalletFunded', { organizationId, environment: 'test', fundingReference: 'sandbox-credit', amountKobo: 1_000_000_000_000 });
  }
  for (let index = 0; index < options.verifications; index++) {
    const organizationId = organizations[index % organizations.length];
    const scope = SCOPES[index % SCOPES.length];
    const priceKobo = PRICES[scope];
    const reference = `vrf_${randomUUID().replaceAll('-', '')}`;
    const wallet = `wallet-${organizationId}.test`;
    const at = new Date(clockMs).toISOString();
    await push(`verification-${reference}`, 'VerificationRequested', {
      reference,
      organizationId,
      environment: 'test',
      keyId: 'key_bench',
      scope,
      category: 'kyc',
      countryCode: 'NG',
      request: scope === 'phone' ? { phoneNumber: '08000000000' } : { number: '12345678901' },
      priceKobo,
      requestedAt: at,
    });
    await push(wallet, 'WalletFundsReserved', { organizationId, environment: 'test', reference, amountKobo: priceKobo, scope });
    if (index % 5 === 4) {
      await push(`verification-${reference}`, 'VerificationFailed', { reference, reasonCode: 'provider_unavailable', errorMessage: 'The provider did not answer', failedAt: at });
      await push(wallet, 'WalletReservationReleased', { organizationId, environment: 'test', reference, amountKobo: priceKobo, reason: 'provider_failed' });
    } else {
      const found = index % 5 !== 3;
      await push(`verification-${reference}`, 'VerificationCompleted', {
        reference,
        outcome: found ? 'found' : 'not_found',
        result: found ? { firstName: 'Test', lastName: 'Person', gender: 'female' } : {},
        completedAt: at,
      });
      await push(wallet, 'WalletDebited', { organizationId, environment: 'test', reference, amountKobo: priceKobo });
    }
  }
  await flush();
  if (store !== undefined) return { events: written, lastPosition: position };
  // Keep the adapter's stream revisions in step with what was written.
  const streams = [...revisions.entries()];
  for (let start = 0; start < streams.length; start += chunk) {
    const slice = streams.slice(start, start + chunk);
    await pool.query(
      `insert into event_streams (stream_id, revision) select * from unnest($1::text[], $2::bigint[])
       on conflict (stream_id) do update set revision = excluded.revision`,
      [slice.map(([stream]) => stream), slice.map(([, count]) => count - 1)],
    );
  }
  return { events: written, lastPosition: position };
}
