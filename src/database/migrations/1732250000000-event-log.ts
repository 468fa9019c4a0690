import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The PostgreSQL event log.
 *
 * Ordering without gaps: a sequence would hand out positions in insertion order while
 * transactions commit in another order, so a subscriber that read position 7 could later miss
 * position 6 committed by a slower transaction. Instead, an event's position is derived from the
 * id of the transaction that wrote it: position = xid8 * 1,000,000 + ordinal within the append.
 * Readers only return positions below pg_snapshot_xmin(pg_current_snapshot()) * 1,000,000, i.e.
 * events of transactions older than every transaction still running. Every transaction below that
 * bound has finished, and every transaction that may still commit has a larger xid and so larger
 * positions: a subscriber can never skip one. Chosen over an advisory lock on append because it
 * serialises nothing: concurrent appends commit in parallel (group commit), and a reader pays only
 * a range scan on the primary key. The cost: a long-running writing transaction anywhere in the
 * cluster holds back what subscribers see until it ends. Limits: the events of one transaction (one
 * append, or a group commit: migration 1732250000006) share 1,000,000 ordinals (the adapter allows
 * 1,000 per append and 5,000 per group), xid8 below 9.2e12.
 */
export class EventLog1732250000000 implements MigrationInterface {
  name = 'EventLog1732250000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table event_streams (
        stream_id text primary key,
        revision bigint not null
      )`);
    await q.query(`
      create table events (
        position bigint primary key,
        stream_id text not null,
        revision bigint not null,
        event_id uuid not null,
        type text not null,
        data jsonb not null,
        metadata jsonb not null,
        created_at timestamptz not null default clock_timestamp(),
        constraint events_stream_revision unique (stream_id, revision),
        constraint events_event_id unique (event_id)
      )`);
    await q.query(`
      create function events_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'the event log is append-only: % on events is not allowed', tg_op using errcode = 'ES001';
      end $$`);
    await q.query(`create trigger events_no_update before update or delete on events for each row execute function events_append_only()`);
    await q.query(`create trigger events_no_truncate before truncate on events for each statement execute function events_append_only()`);

    // p_expected: -1 no stream, -2 any, -3 stream exists, >= 0 the exact current revision.
    // A mismatch raises SQLSTATE ES409 with the actual revision (-1: no stream) in DETAIL.
    await q.query(`
      create function append_events(
        p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[]
      ) returns table (next_revision bigint, last_position bigint)
      language plpgsql as $$
      declare
        n bigint := cardinality(p_ids);
        base bigint := (pg_current_xact_id()::text::bigint) * 1000000;
        last_revision bigint;
        actual bigint;
      begin
        if n is null or n = 0 or n > 999999 then
          raise exception 'an append takes 1 to 999999 events' using errcode = '22023';
        end if;
        if p_expected = -1 then
          insert into event_streams (stream_id, revision) values (p_stream, n - 1)
            on conflict (stream_id) do nothing returning revision into last_revision;
        elsif p_expected = -2 then
          insert into event_streams (stream_id, revision) values (p_stream, n - 1)
            on conflict (stream_id) do update set revision = event_streams.revision + n
            returning revision into last_revision;
        elsif p_expected = -3 then
          update event_streams set revision = revision + n where stream_id = p_stream
            returning revision into last_revision;
        else
          update event_streams set revision = revision + n where stream_id = p_stream and revision = p_expected
            returning revision into last_revision;
        end if;
        if last_revision is null then
          select s.revision into actual from event_streams s where s.stream_id = p_stream;
          raise exception 'wrong expected revision' using errcode = 'ES409', detail = coalesce(actual, -1)::text;
        end if;
        insert into events (position, stream_id, revision, event_id, type, data, metadata)
          select base + e.ordinal - 1, p_stream, last_revision - n + e.ordinal, e.id, e.type, e.data, e.metadata
          from unnest(p_ids, p_types, p_data, p_metadata) with ordinality as e(id, type, data, metadata, ordinal);
        perform pg_notify('ledger_events', '');
        next_revision := last_revision;
        last_position := base + n - 1;
        return next;
      end $$`);

    // The bound below which positions are stable: every transaction under it has finished.
    await q.query(`
      create function events_visible_bound() returns bigint language sql stable as $$
        select (pg_snapshot_xmin(pg_current_snapshot())::text::bigint) * 1000000
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop function events_visible_bound()');
    await q.query('drop function append_events(text, bigint, uuid[], text[], jsonb[], jsonb[])');
    await q.query('drop table events');
    await q.query('drop function events_append_only()');
    await q.query('drop table event_streams');
  }
}
