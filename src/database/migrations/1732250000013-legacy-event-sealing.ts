import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sealing the verification events written in plain text before personal data was sealed
 * (`npm run maintenance -- encrypt-legacy-events`, src/maintenance/).
 *
 * The event log stays append-only with one exception, narrow enough to check row by row: inside a
 * transaction that sets `ledger.seal_legacy_events = on`, an UPDATE may replace the plain personal
 * field of a VerificationRequested (`request`) or VerificationCompleted (`result`) with a sealed
 * envelope, and change nothing else (position, stream, revision, id, type, metadata, time and every
 * other field of the data stay as they were). Deletes and truncation are refused as before.
 *
 * The partial index holds only the events whose personal field is still plain: empty once the
 * command has run (new events are sealed before they are appended), so the service's start-up check
 * and the command's scan cost an index probe, not a scan of the log. Its predicate is
 * UNSEALED_PERSONAL_FIELD in src/event-store/postgres-legacy-events.ts, written the same way so the planner
 * uses the index.
 */
export class LegacyEventSealing1732250000013 implements MigrationInterface {
  name = 'LegacyEventSealing1732250000013';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create or replace function events_append_only() returns trigger language plpgsql as $$
      declare
        field text;
      begin
        if tg_op = 'UPDATE' and current_setting('ledger.seal_legacy_events', true) = 'on' then
          field := case old.type when 'VerificationRequested' then 'request' when 'VerificationCompleted' then 'result' end;
          if field is not null
             and (new.position, new.stream_id, new.revision, new.event_id, new.type, new.metadata, new.created_at)
                 is not distinct from (old.position, old.stream_id, old.revision, old.event_id, old.type, old.metadata, old.created_at)
             and new.data - field = old.data - field
             and (old.data -> field ->> 'sealed') is distinct from 'aes-256-gcm'
             and (new.data -> field ->> 'sealed') = 'aes-256-gcm' then
            return new;
          end if;
        end if;
        raise exception 'the event log is append-only: % on events is not allowed', tg_op using errcode = 'ES001';
      end $$`);
    await q.query(`
      create index events_unsealed_personal on events (position)
      where (type = 'VerificationRequested' and (data -> 'request' ->> 'sealed') is distinct from 'aes-256-gcm')
         or (type = 'VerificationCompleted' and (data -> 'result' ->> 'sealed') is distinct from 'aes-256-gcm')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop index if exists events_unsealed_personal');
    await q.query(`
      create or replace function events_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'the event log is append-only: % on events is not allowed', tg_op using errcode = 'ES001';
      end $$`);
  }
}
