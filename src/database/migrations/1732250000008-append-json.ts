import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The append functions, again, with two changes; what they check and write is unchanged
 * (migrations 1732250000000 and 1732250000006 explain it).
 *
 * 1. The events come as one JSON array, `[{id, type, data, metadata}, …]`, instead of one array
 *    parameter per field. The client then serialises a batch with one JSON.stringify; as arrays of
 *    JSON texts every document was escaped again into an array literal (a fifth of the adapter's
 *    CPU per append), and PostgreSQL parsed the literal before parsing each document.
 * 2. No NOTIFY inside the transaction. A transaction that has notified takes a database-wide lock
 *    when it commits and holds it until its commit is on disk, so every appending transaction
 *    committed one after another and two group commits in flight could not share a WAL flush.
 *    The store announces appends after they commit (PostgresEventStore: at once to its own
 *    subscriptions, by one NOTIFY at most every NOTIFY_INTERVAL_MS to other processes').
 */
export class AppendJson1732250000008 implements MigrationInterface {
  name = 'AppendJson1732250000008';

  async up(q: QueryRunner): Promise<void> {
    await q.query('drop function append_events(text, bigint, uuid[], text[], jsonb[], jsonb[])');
    await q.query('drop function append_event_batch(text[], bigint[], int[], int[], uuid[], text[], jsonb[], jsonb[])');

    // p_expected: -1 no stream, -2 any, -3 stream exists, >= 0 the exact current revision.
    // A mismatch raises SQLSTATE ES409 with the actual revision (-1: no stream) in DETAIL.
    await q.query(`
      create function append_events(p_stream text, p_expected bigint, p_events jsonb)
      returns table (next_revision bigint, last_position bigint)
      language plpgsql as $$
      declare
        n bigint := jsonb_array_length(p_events);
        base bigint := (pg_current_xact_id()::text::bigint) * 1000000;
        last_revision bigint;
        actual bigint;
      begin
        if n = 0 or n > 999999 then
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
          select base + e.ordinal - 1, p_stream, last_revision - n + e.ordinal, (e.event->>'id')::uuid, e.event->>'type', e.event->'data', e.event->'metadata'
          from jsonb_array_elements(p_events) with ordinality as e(event, ordinal);
        next_revision := last_revision;
        last_position := base + n - 1;
        return next;
      end $$`);

    // Per append: its stream, expected revision and event count; per event (p_events, in batch
    // order) the append it belongs to (1-based, p_appends). One result row per append, in batch
    // order: next_revision and last_position, or, when refused, next_revision null and the
    // stream's actual revision (-1: no stream).
    await q.query(`
      create function append_event_batch(p_streams text[], p_expected bigint[], p_counts int[], p_appends int[], p_events jsonb)
      returns table (next_revision bigint, last_position bigint, actual bigint)
      language plpgsql as $$
      declare
        appends int := coalesce(cardinality(p_streams), 0);
        total int := jsonb_array_length(p_events);
        base bigint := (pg_current_xact_id()::text::bigint) * 1000000;
        revisions bigint[] := array_fill(null::bigint, array[greatest(appends, 1)]);
        actuals bigint[] := array_fill(null::bigint, array[greatest(appends, 1)]);
        firsts int[] := array_fill(0, array[greatest(appends, 1)]);
        i int;
        n bigint;
        seen int := 0;
        last_revision bigint;
        current_revision bigint;
        written boolean := false;
      begin
        if appends = 0 or total = 0 or total > 999999 or cardinality(p_expected) <> appends or cardinality(p_counts) <> appends
           or cardinality(p_appends) <> total
           or (select sum(c) from unnest(p_counts) c) <> total or (select min(c) from unnest(p_counts) c) < 1 then
          raise exception 'a batch takes 1 to 999999 events in appends of at least one' using errcode = '22023';
        end if;
        for i in 1..appends loop
          firsts[i] := seen;
          seen := seen + p_counts[i];
        end loop;
        for i in select s.ordinal from unnest(p_streams) with ordinality as s(stream, ordinal) order by s.stream, s.ordinal loop
          n := p_counts[i];
          last_revision := null;
          if p_expected[i] = -1 then
            insert into event_streams (stream_id, revision) values (p_streams[i], n - 1)
              on conflict (stream_id) do nothing returning revision into last_revision;
          elsif p_expected[i] = -2 then
            insert into event_streams (stream_id, revision) values (p_streams[i], n - 1)
              on conflict (stream_id) do update set revision = event_streams.revision + n
              returning revision into last_revision;
          elsif p_expected[i] = -3 then
            update event_streams set revision = revision + n where stream_id = p_streams[i]
              returning revision into last_revision;
          else
            update event_streams set revision = revision + n where stream_id = p_streams[i] and revision = p_expected[i]
              returning revision into last_revision;
          end if;
          if last_revision is null then
            select coalesce(max(s.revision), -1) into current_revision from event_streams s where s.stream_id = p_streams[i];
            actuals[i] := current_revision;
          else
            revisions[i] := last_revision;
            written := true;
          end if;
        end loop;
        if written then
          insert into events (position, stream_id, revision, event_id, type, data, metadata)
            select base + e.ordinal - 1, p_streams[e.append], revisions[e.append] - p_counts[e.append] + (e.ordinal - firsts[e.append]),
                   (e.event->>'id')::uuid, e.event->>'type', e.event->'data', e.event->'metadata'
            from (select p_appends[o.ordinal] as append, o.event, o.ordinal
                  from jsonb_array_elements(p_events) with ordinality as o(event, ordinal)) e
            where revisions[e.append] is not null;
        end if;
        for i in 1..appends loop
          next_revision := revisions[i];
          last_position := base + firsts[i] + p_counts[i] - 1;
          actual := actuals[i];
          return next;
        end loop;
      end $$`);
  }

  async down(): Promise<void> {
    throw new Error('AppendJson1732250000008 is not reversible: restore the database from a backup taken before it');
  }
}
