import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Contact data sealed (src/data-protection/contact-data.ts). The event log's one exception to
 * append-only (migration 1732250000013) gains a second case, as narrow: inside a transaction that
 * sets `ledger.seal_legacy_events = on`, an UPDATE may replace the clear `email` of an
 * OrganizationRegistered with its sealed form (`c1:…`) and change nothing else. The console's rows
 * written in clear are sealed by the service's start-up pass (LegacyContactSealing), which needs
 * the master key, so no migration can do it.
 */
export class ContactSealing1796000001100 implements MigrationInterface {
  name = 'ContactSealing1796000001100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create or replace function events_append_only() returns trigger language plpgsql as $$
      declare
        field text;
      begin
        if tg_op = 'UPDATE' and current_setting('ledger.seal_legacy_events', true) = 'on' then
          field := case old.type when 'VerificationRequested' then 'request' when 'VerificationCompleted' then 'result' when 'OrganizationRegistered' then 'email' end;
          if field is not null
             and (new.position, new.stream_id, new.revision, new.event_id, new.type, new.metadata, new.created_at)
                 is not distinct from (old.position, old.stream_id, old.revision, old.event_id, old.type, old.metadata, old.created_at)
             and new.data - field = old.data - field
             and ((field <> 'email' and (old.data -> field ->> 'sealed') is distinct from 'aes-256-gcm' and (new.data -> field ->> 'sealed') = 'aes-256-gcm')
               or (field = 'email' and (old.data ->> 'email') not like 'c1:%' and (new.data ->> 'email') like 'c1:%')) then
            return new;
          end if;
        end if;
        raise exception 'the event log is append-only: % on events is not allowed', tg_op using errcode = 'ES001';
      end $$`);
  }

  async down(q: QueryRunner): Promise<void> {
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
  }
}
