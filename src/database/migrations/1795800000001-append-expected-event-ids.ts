import type { MigrationInterface, QueryRunner } from 'typeorm';
import { AppendWriteSets1795647443990 } from './1795647443990-append-write-sets.js';

/**
 * Appends conditioned on the event at their expected revision (AppendOptions.expectedEventId).
 *
 * `append_write_sets` again (migration 1795647443990 explains the rest, unchanged), with one more
 * parameter: `p_expected_ids`, per append, null or the id of the event the stream must hold at the
 * append's expected revision. An append whose stream is at its expected revision but holds another
 * event there is refused as a wrong revision is (its set writes nothing), with `actual` equal to the
 * expected revision. The stream rows are locked before the check, so the event cannot change
 * between the check and the write. When an earlier write-set of the same batch brought the stream
 * to that revision, the event is that set's, taken from the batch.
 *
 * What it is for: a wallet batch decided on a fold held in memory must not be written when the log
 * lost the fold's last events and other writers brought the stream back to the same revision
 * (a failover, a restore). The condition is checked by the append in the statement it already
 * makes, where before a read of the stream at the fold's revision preceded every such append.
 */
export class AppendExpectedEventIds1795800000001 implements MigrationInterface {
  name = 'AppendExpectedEventIds1795800000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query('drop function append_write_sets(text[], bigint[], int[], int[], int[], jsonb)');
    await q.query(`
      create function append_write_sets(p_streams text[], p_expected bigint[], p_counts int[], p_sets int[], p_appends int[], p_events jsonb, p_expected_ids uuid[])
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

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop function append_write_sets(text[], bigint[], int[], int[], int[], jsonb, uuid[])');
    await new AppendWriteSets1795647443990().up(q);
  }
}
