import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { EventStore, JsonObject } from './event-store.port.js';

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
  /** The event store in use: when it has no log reader (it is not PostgreSQL), events are appended through it. */
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
  // A store with a log reader keeps its log in this database's `events` table, written here directly.
  const store = options.store?.logReader !== undefined ? undefined : options.store;
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
    for (let start = 0; start < buffer.length;) {
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
      [
        positions,
        buffer.map((row) => row.streamId),
        buffer.map((row) => row.revision),
        buffer.map((row) => row.type),
        buffer.map((row) => JSON.stringify(row.data)),
        buffer.map((row) => row.occurredAt),
      ],
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

/**
 * The same log as writeSampleLog (organizations, then verifications each requested, reserved,
 * completed or failed, and debited or released), generated inside PostgreSQL by one
 * `insert … select` per chunk of verifications: ten million events in minutes rather than the
 * better part of an hour through the client. PostgreSQL only. References are md5-based (unique per
 * run), event ids `gen_random_uuid()`; wallet events carry no chain hash, as events written before
 * the chain existed do (the chain links them virtually).
 */
export async function writeSampleLogInDatabase(
  pool: pg.Pool,
  options: { readonly organizations: number; readonly verifications: number; readonly chunk?: number; readonly onProgress?: (eventsWritten: number) => void },
): Promise<{ events: number; lastPosition: bigint }> {
  const organizations = options.organizations;
  const chunk = options.chunk ?? 250_000;
  if (!Number.isInteger(organizations) || organizations < 1 || organizations > 100_000) throw new RangeError('organizations must be 1 to 100000');
  const { rows } = await pool.query<{ max: string | null }>('select max(position) as max from events');
  const base = BigInt(rows[0].max ?? '0');
  const seed = randomUUID().slice(0, 8);
  // Shared pieces of SQL: $1 the base position, $2 the run's seed, $3 the organizations.
  const organizationId = (o: string, seedParam = '$2') => `'org_' || lpad((${o})::text, 6, '0') || '_' || substr(md5(${seedParam} || ':' || (${o})::text), 1, 8)`;
  // The event at ordinal j (1-based in this log) occurred 7 ms after the one before it, from 2026-01-01.
  const at = (j: string) => `to_char(timestamptz '2026-01-01T00:00:00Z' + (${j}) * interval '7 milliseconds', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const insert = (select: string) =>
    `insert into events (position, stream_id, revision, event_id, type, data, metadata, created_at)
     select $1::bigint + e.j, e.stream_id, e.revision, gen_random_uuid(), e.type, e.data,
            jsonb_build_object('correlationId', gen_random_uuid()::text, 'causationId', null, 'actor', jsonb_build_object('type', 'system', 'id', 'bench'), 'occurredAt', ${at('e.j')}),
            ${at('e.j')}::timestamptz
     from (${select}) e order by e.j`;
  let written = 0;
  await pool.query(
    insert(`select 4 * o + k as j, s.stream_id, s.revision, s.type, s.data from generate_series(0, $3::int - 1) as o,
      lateral (select ${organizationId('o')} as id) org,
      lateral (values
        (1, 'organization-' || org.id, 0, 'OrganizationRegistered', jsonb_build_object('schemaVersion', 1, 'organizationId', org.id, 'name', 'Org ' || org.id, 'email', 'ops@' || org.id || '.example', 'activeScopes', jsonb_build_array('nin', 'bvn', 'phone', 'bank_account'))),
        (2, 'organization-' || org.id, 1, 'OrganizationApproved', jsonb_build_object('schemaVersion', 1, 'organizationId', org.id)),
        (3, 'organization-' || org.id, 2, 'ApiKeyIssued', jsonb_build_object('schemaVersion', 1, 'organizationId', org.id, 'keyId', 'key_' || substr(md5($2 || ':key:' || o), 1, 16), 'name', 'bench',
           'keyHash', md5($2 || ':hash:' || o) || md5($2 || ':hash2:' || o), 'prefix', 'service_test_abcd', 'last4', 'wxyz', 'environment', 'test', 'scopes', null)),
        (4, 'wallet-' || org.id || '.test', 0, 'WalletFunded', jsonb_build_object('schemaVersion', 1, 'organizationId', org.id, 'environment', 'test', 'fundingReference', 'sandbox-credit', 'amountKobo', 1000000000000))
      ) as s(k, stream_id, revision, type, data)`),
    [base.toString(), seed, organizations],
  );
  written += organizations * 4;
  options.onProgress?.(written);
  for (let from = 0; from < options.verifications; from += chunk) {
    const to = Math.min(options.verifications, from + chunk) - 1;
    await pool.query(
      insert(`select 4 * $3::bigint + 4 * i + k as j, s.stream_id, s.revision, s.type, s.data from generate_series($4::bigint, $5::bigint) as i,
        lateral (select ${organizationId('i % $3')} as org, 'vrf_' || md5($2 || ':vrf:' || i) as reference, (array['nin', 'bvn', 'phone', 'bank_account'])[1 + i % 4] as scope,
                        (array[10000, 10000, 7500, 5000])[1 + i % 4] as price, ${at(`4 * $3::bigint + 4 * i`)} as at) v,
        lateral (values
          (1, 'verification-' || v.reference, 0, 'VerificationRequested', jsonb_build_object('schemaVersion', 1, 'reference', v.reference, 'organizationId', v.org, 'environment', 'test', 'keyId', 'key_bench',
             'scope', v.scope, 'category', 'kyc', 'countryCode', 'NG', 'request', case when v.scope = 'phone' then '{"phoneNumber":"08000000000"}'::jsonb else '{"number":"12345678901"}'::jsonb end,
             'priceKobo', v.price, 'requestedAt', v.at)),
          (2, 'wallet-' || v.org || '.test', 1 + 2 * (i / $3), 'WalletFundsReserved', jsonb_build_object('schemaVersion', 1, 'organizationId', v.org, 'environment', 'test', 'reference', v.reference, 'amountKobo', v.price, 'scope', v.scope)),
          (3, 'verification-' || v.reference, 1, case when i % 5 = 4 then 'VerificationFailed' else 'VerificationCompleted' end,
             case when i % 5 = 4 then jsonb_build_object('schemaVersion', 1, 'reference', v.reference, 'reasonCode', 'provider_unavailable', 'errorMessage', 'The provider did not answer', 'failedAt', v.at)
                  else jsonb_build_object('schemaVersion', 1, 'reference', v.reference, 'outcome', case when i % 5 = 3 then 'not_found' else 'found' end,
                         'result', case when i % 5 = 3 then '{}'::jsonb else '{"firstName":"Test","lastName":"Person","gender":"female"}'::jsonb end, 'completedAt', v.at) end),
          (4, 'wallet-' || v.org || '.test', 2 + 2 * (i / $3), case when i % 5 = 4 then 'WalletReservationReleased' else 'WalletDebited' end,
             case when i % 5 = 4 then jsonb_build_object('schemaVersion', 1, 'organizationId', v.org, 'environment', 'test', 'reference', v.reference, 'amountKobo', v.price, 'reason', 'provider_failed')
                  else jsonb_build_object('schemaVersion', 1, 'organizationId', v.org, 'environment', 'test', 'reference', v.reference, 'amountKobo', v.price) end)
        ) as s(k, stream_id, revision, type, data)`),
      [base.toString(), seed, organizations, from, to],
    );
    written += (to - from + 1) * 4;
    options.onProgress?.(written);
  }
  // Keep the adapter's stream revisions in step with what was written, computed rather than read
  // back (grouping ten million events by stream took minutes): each organization stream holds 3
  // events, each verification stream 2, and each wallet its funding and 2 per verification of its
  // organization.
  await pool.query(
    `insert into event_streams (stream_id, revision)
     select 'organization-' || ${organizationId('o', '$1')}, 2 from generate_series(0, $2::int - 1) as o
     union all
     select 'wallet-' || ${organizationId('o', '$1')} || '.test', 2 * (case when o < $3 then ($3 - 1 - o) / $2 + 1 else 0 end) from generate_series(0, $2::int - 1) as o
     union all
     select 'verification-vrf_' || md5($1 || ':vrf:' || i), 1 from generate_series(0, $3::bigint - 1) as i
     on conflict (stream_id) do update set revision = excluded.revision`,
    [seed, organizations, options.verifications],
  );
  return { events: written, lastPosition: base + BigInt(written) };
}
