import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Write-sets: appends to several streams that commit all together or not at all, several
 * write-sets per transaction (the group commit).
 *
 * `append_write_sets` replaces `append_event_batch` for group commits. Each append still carries
 * its own stream, expected revision (the codes of append_events) and events; each now also belongs
 * to a write-set (`p_sets`, 1-based, the appends of one set next to each other, sets in batch
 * order). A write-set is written only when every one of its appends matches its expected revision;
 * a refused write-set writes nothing and the other write-sets of the batch are written. A single
 * append is a write-set of one, so the group commit of single appends behaves as before.
 *
 * How it decides without undoing anything:
 * 1. Every stream row the batch names is locked first, in stream-id order (`for update`), so two
 *    batches naming the same streams wait for each other instead of deadlocking, and no other
 *    writer can move those streams until this transaction ends.
 * 2. The write-sets are then decided in batch order on those revisions, in memory: each set sees
 *    the revisions the accepted sets before it left (two sets may append to one stream), and a set
 *    with one refused append leaves them untouched.
 * 3. Only then are the stream rows written (in stream-id order) and the events of the accepted sets
 *    inserted. A stream the batch creates that another transaction created meanwhile (its row did
 *    not exist at step 1) raises ES409 for the whole statement: nothing is written, and the adapter
 *    tries each write-set again alone, as for any batch that fails as a whole.
 *
 * Positions and the epoch are those of migration 1795647443977: `(xid + epoch) × 1,000,000 + the
 * event's ordinal in the batch`; refused events leave gaps (positions are not dense).
 *
 * Result: one row per append, in batch order: next_revision and last_position when written; when
 * its set was refused, next_revision null, and `actual` (the stream's revision as that set saw it,
 * -1: no stream) on the appends that did not match, null on the others.
 */
export class AppendWriteSets1795647443990 implements MigrationInterface {
  name = 'AppendWriteSets1795647443990';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create function append_write_sets(p_streams text[], p_expected bigint[], p_counts int[], p_sets int[], p_appends int[], p_events jsonb)
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
      begin
        if appends = 0 or total = 0 or total > 999999 or cardinality(p_expected) <> appends or cardinality(p_counts) <> appends
           or cardinality(p_sets) <> appends or cardinality(p_appends) <> total
           or (select sum(c) from unnest(p_counts) c) <> total or (select min(c) from unnest(p_counts) c) < 1
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
            cur := scratch[array_position(names, p_streams[j])];
            expected := p_expected[j];
            if (expected = -1 and cur <> -1) or (expected = -3 and cur = -1) or (expected >= 0 and cur <> expected) then
              actuals[j] := cur;
              ok := false;
            else
              scratch[array_position(names, p_streams[j])] := cur + p_counts[j];
              revisions[j] := cur + p_counts[j];
            end if;
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
    await q.query('drop function append_write_sets(text[], bigint[], int[], int[], int[], jsonb)');
  }
}
