import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two-key advisory lock namespace of a stream's appends: `(namespace, hashtext(stream_id))`,
 * apart from the projection machinery's (projections/runner/locks.ts).
 */
export const STREAM_LOCK_NAMESPACE = 7_120_010;

/**
 * Appends take their streams before their transaction id.
 *
 * A position is the appending transaction's id (plus the epoch) times 1,000,000: migration
 * 1795647443977. The append functions took that id first and locked the stream rows after, so an
 * append could take its id, wait for a stream another transaction was writing (a two-stream
 * write-set waiting for its first stream, an append with `any` or `stream_exists` meeting another at
 * the row), and then write the stream's next event below the position of the event written while it
 * waited: a stream read in log order came out of revision order. An append with an exact revision or
 * `no_stream` never did, because it fails once the stream has moved.
 *
 * Now every append first takes a transaction-scoped advisory lock per stream (in hash order, so two
 * batches never wait for each other crosswise), and only then its transaction id. Whoever wrote the
 * stream before has committed by then, and its id, taken before its own commit, is lower. The lock
 * covers streams that do not exist yet, which have no row to lock. It serialises only appends to
 * one stream, which the stream's row already did. A caller must not have taken a transaction id
 * before the append in the same transaction (none does: each append is one statement).
 *
 * The functions are otherwise those of migrations 1795647443977 (append_events) and 1795800000001
 * (append_write_sets).
 */
export class AppendStreamLocks1796000000501 implements MigrationInterface {
  name = 'AppendStreamLocks1796000000501';

  async up(q: QueryRunner): Promise<void> {
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
        -- The stream first, the transaction id after: see the class comment.
        perform pg_advisory_xact_lock(${STREAM_LOCK_NAMESPACE}, hashtext(p_stream));
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
      create or replace function append_write_sets(p_streams text[], p_expected bigint[], p_counts int[], p_sets int[], p_appends int[], p_events jsonb, p_expected_ids uuid[])
      returns table (next_revision bigint, last_position bigint, actual bigint)
      language plpgsql as $$
      declare
        appends int := coalesce(cardinality(p_streams), 0);
        total int := jsonb_array_length(p_events);
        log_epoch bigint;
        log_floor bigint;
        base bigint;
        names text[];
        revs bigint[];
        originals bigint[];
        scratch bigint[];
        revisions bigint[] := array_fill(null::bigint, array[greatest(appends, 1)]);
        actuals bigint[] := array_fill(null::bigint, array[greatest(appends, 1)]);
        firsts int[] := array_fill(0, array[greatest(appends, 1)]);
        locked record;
        i int;
        j int;
        set_start int;
        set_end int;
        seen int := 0;
        cur bigint;
        expected bigint;
        ok boolean;
        written boolean := false;
        created bigint;
        slot int;
        earlier int;
        stored uuid;
        lock_key int;
      begin
        if appends = 0 or total = 0 or total > 999999 or cardinality(p_expected) <> appends or cardinality(p_counts) <> appends
           or cardinality(p_sets) <> appends or cardinality(p_appends) <> total
           or (select sum(c) from unnest(p_counts) c) <> total or (select min(c) from unnest(p_counts) c) < 1
           or cardinality(p_expected_ids) <> appends
           or p_sets[1] <> 1 or exists (select 1 from generate_series(2, appends) k where p_sets[k] not in (p_sets[k - 1], p_sets[k - 1] + 1)) then
          raise exception 'a batch takes 1 to 999999 events in appends of at least one, in write-sets numbered from 1 in order' using errcode = '22023';
        end if;
        select array_agg(s order by s) into names from (select distinct unnest(p_streams) as s) d;
        -- The streams first, the transaction id after: see the class comment.
        for lock_key in select distinct hashtext(stream_name) from unnest(names) as stream_name order by 1 loop
          perform pg_advisory_xact_lock(${STREAM_LOCK_NAMESPACE}, lock_key);
        end loop;
        select e.epoch, e.floor_position into log_epoch, log_floor from event_log_epoch e;
        base := (pg_current_xact_id()::text::bigint + log_epoch) * 1000000;
        if base <= log_floor then
          raise exception 'the event log''s positions are behind its events' using errcode = 'ES503', detail = log_floor::text;
        end if;
        for i in 1..appends loop
          firsts[i] := seen;
          seen := seen + p_counts[i];
        end loop;
        revs := array_fill(-1::bigint, array[cardinality(names)]);
        for locked in select s.stream_id, s.revision from event_streams s where s.stream_id = any(names) order by s.stream_id for update loop
          revs[array_position(names, locked.stream_id)] := locked.revision;
        end loop;
        originals := revs;

        i := 1;
        while i <= appends loop
          set_start := i;
          while i < appends and p_sets[i + 1] = p_sets[set_start] loop
            i := i + 1;
          end loop;
          set_end := i;
          scratch := revs;
          ok := true;
          for j in set_start..set_end loop
            slot := array_position(names, p_streams[j]);
            cur := scratch[slot];
            expected := p_expected[j];
            if (expected = -1 and cur <> -1) or (expected = -3 and cur = -1) or (expected >= 0 and cur <> expected) then
              actuals[j] := cur;
              ok := false;
              continue;
            end if;
            if p_expected_ids[j] is not null then
              if expected < 0 then
                raise exception 'an expected event id needs an expected revision' using errcode = '22023';
              end if;
              stored := null;
              if expected <= originals[slot] then
                select e.event_id into stored from events e where e.stream_id = p_streams[j] and e.revision = expected;
              else
                -- The stream reached that revision in this batch: the event is one of an earlier set's.
                for earlier in 1..set_start - 1 loop
                  if p_streams[earlier] = p_streams[j] and revisions[earlier] is not null
                     and expected between revisions[earlier] - p_counts[earlier] + 1 and revisions[earlier] then
                    stored := (p_events -> (firsts[earlier] + (expected - (revisions[earlier] - p_counts[earlier] + 1)))::int ->> 'id')::uuid;
                  end if;
                end loop;
              end if;
              if stored is distinct from p_expected_ids[j] then
                actuals[j] := cur;
                ok := false;
                continue;
              end if;
            end if;
            scratch[slot] := cur + p_counts[j];
            revisions[j] := cur + p_counts[j];
          end loop;
          if ok then
            revs := scratch;
            written := true;
          else
            for j in set_start..set_end loop
              revisions[j] := null;
            end loop;
          end if;
          i := set_end + 1;
        end loop;

        if written then
          for j in 1..cardinality(names) loop
            continue when revs[j] = originals[j];
            if originals[j] = -1 then
              created := null;
              insert into event_streams (stream_id, revision) values (names[j], revs[j])
                on conflict (stream_id) do nothing returning revision into created;
              if created is null then
                raise exception 'wrong expected revision' using errcode = 'ES409',
                  detail = (select s.revision from event_streams s where s.stream_id = names[j])::text, hint = names[j];
              end if;
            else
              update event_streams set revision = revs[j] where stream_id = names[j];
            end if;
          end loop;
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

  async down(q: QueryRunner): Promise<void> {
    // The functions as they were: the transaction id first.
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
      create or replace function append_write_sets(p_streams text[], p_expected bigint[], p_counts int[], p_sets int[], p_appends int[], p_events jsonb, p_expected_ids uuid[])
      returns table (next_revision bigint, last_position bigint, actual bigint)
      language plpgsql as $$
      declare
        appends int := coalesce(cardinality(p_streams), 0);
        total int := jsonb_array_length(p_events);
        log_epoch bigint;
        log_floor bigint;
        base bigint;
        names text[];
        revs bigint[];
        originals bigint[];
        scratch bigint[];
        revisions bigint[] := array_fill(null::bigint, array[greatest(appends, 1)]);
        actuals bigint[] := array_fill(null::bigint, array[greatest(appends, 1)]);
        firsts int[] := array_fill(0, array[greatest(appends, 1)]);
        locked record;
        i int;
        j int;
        set_start int;
        set_end int;
        seen int := 0;
        cur bigint;
        expected bigint;
        ok boolean;
        written boolean := false;
        created bigint;
        slot int;
        earlier int;
        stored uuid;
      begin
        if appends = 0 or total = 0 or total > 999999 or cardinality(p_expected) <> appends or cardinality(p_counts) <> appends
           or cardinality(p_sets) <> appends or cardinality(p_appends) <> total
           or (select sum(c) from unnest(p_counts) c) <> total or (select min(c) from unnest(p_counts) c) < 1
           or cardinality(p_expected_ids) <> appends
           or p_sets[1] <> 1 or exists (select 1 from generate_series(2, appends) k where p_sets[k] not in (p_sets[k - 1], p_sets[k - 1] + 1)) then
          raise exception 'a batch takes 1 to 999999 events in appends of at least one, in write-sets numbered from 1 in order' using errcode = '22023';
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

        select array_agg(s order by s) into names from (select distinct unnest(p_streams) as s) d;
        revs := array_fill(-1::bigint, array[cardinality(names)]);
        for locked in select s.stream_id, s.revision from event_streams s where s.stream_id = any(names) order by s.stream_id for update loop
          revs[array_position(names, locked.stream_id)] := locked.revision;
        end loop;
        originals := revs;

        i := 1;
        while i <= appends loop
          set_start := i;
          while i < appends and p_sets[i + 1] = p_sets[set_start] loop
            i := i + 1;
          end loop;
          set_end := i;
          scratch := revs;
          ok := true;
          for j in set_start..set_end loop
            slot := array_position(names, p_streams[j]);
            cur := scratch[slot];
            expected := p_expected[j];
            if (expected = -1 and cur <> -1) or (expected = -3 and cur = -1) or (expected >= 0 and cur <> expected) then
              actuals[j] := cur;
              ok := false;
              continue;
            end if;
            if p_expected_ids[j] is not null then
              if expected < 0 then
                raise exception 'an expected event id needs an expected revision' using errcode = '22023';
              end if;
              stored := null;
              if expected <= originals[slot] then
                select e.event_id into stored from events e where e.stream_id = p_streams[j] and e.revision = expected;
              else
                -- The stream reached that revision in this batch: the event is one of an earlier set's.
                for earlier in 1..set_start - 1 loop
                  if p_streams[earlier] = p_streams[j] and revisions[earlier] is not null
                     and expected between revisions[earlier] - p_counts[earlier] + 1 and revisions[earlier] then
                    stored := (p_events -> (firsts[earlier] + (expected - (revisions[earlier] - p_counts[earlier] + 1)))::int ->> 'id')::uuid;
                  end if;
                end loop;
              end if;
              if stored is distinct from p_expected_ids[j] then
                actuals[j] := cur;
                ok := false;
                continue;
              end if;
            end if;
            scratch[slot] := cur + p_counts[j];
            revisions[j] := cur + p_counts[j];
          end loop;
          if ok then
            revs := scratch;
            written := true;
          else
            for j in set_start..set_end loop
              revisions[j] := null;
            end loop;
          end if;
          i := set_end + 1;
        end loop;

        if written then
          for j in 1..cardinality(names) loop
            continue when revs[j] = originals[j];
            if originals[j] = -1 then
              created := null;
              insert into event_streams (stream_id, revision) values (names[j], revs[j])
                on conflict (stream_id) do nothing returning revision into created;
              if created is null then
                raise exception 'wrong expected revision' using errcode = 'ES409',
                  detail = (select s.revision from event_streams s where s.stream_id = names[j])::text, hint = names[j];
              end if;
            else
              update event_streams set revision = revs[j] where stream_id = names[j];
            end if;
          end loop;
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
}
