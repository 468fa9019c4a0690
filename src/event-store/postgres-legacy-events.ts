import type pg from 'pg';
import type { JsonObject, LegacyEventLog, UnsealedEvent } from './event-store.port.js';

/**
 * The verification events whose personal field is still plain: the predicate of the partial index
 * `events_unsealed_personal` (migration 1732250000012), written identically so the planner uses it.
 */
export const UNSEALED_PERSONAL_FIELD = `((type = 'VerificationRequested' and (data -> 'request' ->> 'sealed') is distinct from 'aes-256-gcm')
   or (type = 'VerificationCompleted' and (data -> 'result' ->> 'sealed') is distinct from 'aes-256-gcm'))`;

/** A field name of the events' data, written into SQL as a literal. */
function fieldName(field: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(field)) throw new RangeError('invariant: a field name is a word');
  return field;
}

/**
 * LegacyEventLog on the PostgreSQL log: reads through the pool; the write, in the caller's
 * transaction, sets `ledger.seal_legacy_events`, the one way past the trigger that refuses updates
 * of the log, and replaces only the personal field of an event whose field is not sealed yet
 * (positions, ids, revisions, types, metadata and the other fields stay as they were).
 */
export function postgresLegacyEvents(pool: pg.Pool): LegacyEventLog {
  return {
    async clearOrganizationEmails(sealedPrefix) {
      const { rows } = await pool.query<{ position: string; organization_id: string; email: string }>(
        `select position::text as position, data ->> 'organizationId' as organization_id, data ->> 'email' as email from events
          where type = 'OrganizationRegistered' and jsonb_typeof(data -> 'email') = 'string' and not starts_with(data ->> 'email', $1)`,
        [sealedPrefix],
      );
      return rows.map((row) => ({ position: row.position, organizationId: row.organization_id, email: row.email }));
    },
    async sealOrganizationEmail(position, sealed) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        await client.query("select set_config('ledger.seal_legacy_events', 'on', true)");
        await client.query("update events set data = jsonb_set(data, '{email}', to_jsonb($2::text)) where position = $1::bigint", [position, sealed]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async hasUnsealed() {
      const { rows } = await pool.query<{ found: boolean }>(`select exists (select 1 from events where ${UNSEALED_PERSONAL_FIELD}) as found`);
      return rows[0].found;
    },
    async countUnsealed() {
      const { rows } = await pool.query<{ total: string }>(`select count(*) as total from events where ${UNSEALED_PERSONAL_FIELD}`);
      return Number(rows[0].total);
    },
    async unsealedAfter(position, limit) {
      const { rows } = await pool.query<{ position: string; stream_id: string; type: UnsealedEvent['type']; data: JsonObject }>(
        `select position::text as position, stream_id, type, data from events where ${UNSEALED_PERSONAL_FIELD} and position > $1::bigint order by position limit $2`,
        [position, limit],
      );
      return rows.map((row) => ({ position: row.position, streamId: row.stream_id, type: row.type, data: row.data }));
    },
    async requestOf(streamId) {
      const { rows } = await pool.query<{ data: JsonObject }>("select data from events where stream_id = $1 and revision = 0 and type = 'VerificationRequested'", [streamId]);
      return rows[0]?.data;
    },
    async sealedFieldsOf(streamIds, type, field) {
      const name = fieldName(field);
      const { rows } = await pool.query<{ stream_id: string; sealed: JsonObject }>(
        `select distinct on (stream_id) stream_id, data -> '${name}' as sealed from events
         where stream_id = any($1::text[]) and type = $2 and (data -> '${name}' ->> 'sealed') = 'aes-256-gcm' order by stream_id, position`,
        [[...streamIds], type],
      );
      return new Map(rows.map((row) => [row.stream_id, row.sealed]));
    },
    async sealInPlace(run, sealed) {
      await run("set local ledger.seal_legacy_events = 'on'");
      await run(
        `update events e set data = jsonb_set(e.data, array[f.field], f.sealed)
         from jsonb_to_recordset($1::jsonb) as f(position bigint, field text, sealed jsonb)
         where e.position = f.position and (e.data -> f.field ->> 'sealed') is distinct from 'aes-256-gcm'`,
        [JSON.stringify(sealed)],
      );
    },
  };
}
