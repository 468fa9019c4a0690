import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Positions that survive a move to another cluster.
 *
 * A position is `(xid + epoch) × 1,000,000 + ordinal` and the visible bound
 * `(xmin + epoch) × 1,000,000`, where `epoch` is the one row of `event_log_epoch` (0 until raised).
 * Transaction ids belong to a cluster: after a dump and restore, or a logical-replication move, the
 * new cluster's counter is far behind the positions of the log it received, so without an offset
 * its bound would sit below the whole log (reads and subscriptions would see none of it) and its new
 * events would sort below the old ones, or collide with them.
 *
 * `raise_event_log_epoch()` (called by every process at start, after the migrations, and by the
 * append path when an append finds its positions behind the log) raises the epoch so that the bound
 * and every new position lie above the newest position in the log. It takes `event_log_epoch`
 * ACCESS EXCLUSIVE: every append and every read of the bound reads that row and so holds ACCESS
 * SHARE on it until its transaction ends; the raise therefore waits for the appends in flight (which
 * computed their positions with the old epoch) to end and holds back new ones until it commits. No
 * transaction that may still commit has positions computed with an older epoch than a reader's
 * bound, which keeps the ordering argument of migration 1732250000000.
 *
 * `floor_position` is the newest position at the last raise or start-up check. An append whose
 * positions would not lie above it raises ES503 instead of writing below (or onto) the log; the
 * adapter then raises the epoch and tries once more.
 *
 * The append functions are otherwise those of migration 1732250000008.
 */
export class PositionEpoch1795647443977 implements MigrationInterface {
  name = 'PositionEpoch1795647443977';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table event_log_epoch (
        singleton boolean primary key default true check (singleton),
        epoch bigint not null default 0 check (epoch >= 0),
        floor_position bigint not null default 0,
        raised_at timestamptz
      )`);
    await q.query(`insert into event_log_epoch (epoch, floor_position) select 0, coalesce(max(position), 0) from events`);

    await q.query(`
      create or replace function events_visible_bound() returns bigint language sql stable as $$
        select (pg_snapshot_xmin(pg_current_snapshot())::text::bigint + e.epoch) * 1000000 from event_log_epoch e
      $$`);

    // p_expected: -1 no stream, -2 any, -3 stream exists, >= 0 the exact current revision.
    // A mismatch raises SQLSTATE ES409 with the actual revision (-1: no stream) in DETAIL; positions
    // behind the log raise ES503.
    await q.query(`
      create or replace function append_events(p_stream text, p_expected bigint, p_events jsonb)
      returns table (next_revision bigint, last_position bigint)
      language plpgsql as $$
      declare
        n bigint := jsonb_array_length(p_events);
        log_epoch bigint;
        log_floor bigint;
        base bigint;
        last_revision bigint;
        actual bigint;
      begin
        if n = 0 or n > 999999 then
          raise exception 'an append takes 1 to 999999 events' using errcode = '22023';
        end if;
        select e.epoch, e.floor_position into log_epoch, log_floor from event_log_epoch e;
        base := (pg_current_xact_id()::text::bigint + log_epoch) * 1000000;
        if base <= log_floor then
          raise exception 'the event log''s positions are behind its events' using errcode = 'ES503', detail = log_floor::text;
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

    await q.query(`
      create or replace function append_event_batch(p_streams text[], p_expected bigint[], p_counts int[], p_appends int[], p_events jsonb)
      returns table (next_revision bigint, last_position bigint, actual bigint)
      language plpgsql as $$
      declare
        appends int := coalesce(cardinality(p_streams), 0);
        total int := jsonb_array_length(p_events);
        log_epoch bigint;
        log_floor bigint;
        base bigint;
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
        select e.epoch, e.floor_position into log_epoch, log_floor from event_log_epoch e;
        base := (pg_current_xact_id()::text::bigint + log_epoch) * 1000000;
        if base <= log_floor then
          raise exception 'the event log''s positions are behind its events' using errcode = 'ES503', detail = log_floor::text;
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

    // Raises the epoch when the log holds a position at or above what the cluster's counter yields;
    // otherwise only moves the floor up to the newest position. ES504 when no epoch can place new
    // positions above the log (positions past the 64-bit range).
    await q.query(`
      create function raise_event_log_epoch(p_lock_timeout_ms int default 5000)
      returns table (raised boolean, epoch bigint, newest_position bigint)
      language plpgsql as $$
      declare
        newest bigint;
        current_epoch bigint;
        next_xid bigint;
        oldest bigint;
        wanted bigint;
      begin
        -- Without the lock first: at a normal start the counter is ahead and only the floor moves.
        select max(position) into newest from events;
        select e.epoch into current_epoch from event_log_epoch e;
        next_xid := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
        if newest is null or (next_xid + current_epoch) * 1000000 > newest then
          update event_log_epoch set floor_position = coalesce(newest, 0) where floor_position < coalesce(newest, 0);
          raised := false;
          epoch := current_epoch;
          newest_position := newest;
          return next;
          return;
        end if;
        -- Behind: wait for the appends in flight, hold new ones back, and look again.
        perform set_config('lock_timeout', p_lock_timeout_ms || 'ms', true);
        lock table event_log_epoch in access exclusive mode;
        select max(position) into newest from events;
        select e.epoch into current_epoch from event_log_epoch e;
        next_xid := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
        if (next_xid + current_epoch) * 1000000 > newest then
          raised := false;
          epoch := current_epoch;
          newest_position := newest;
          return next;
          return;
        end if;
        oldest := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
        wanted := newest / 1000000 + 1 - oldest;
        if wanted > 9223372036853 - next_xid - 1000000000 then
          raise exception 'the event log''s newest position % leaves no room for new positions', newest using errcode = 'ES504';
        end if;
        update event_log_epoch set epoch = wanted, floor_position = newest, raised_at = now();
        raised := true;
        epoch := wanted;
        newest_position := newest;
        return next;
      end $$`);
  }

  async down(): Promise<void> {
    throw new Error('PositionEpoch1795647443977 is not reversible: restore the database from a backup taken before it');
  }
}
