import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Group commit: several appends, to any streams, in one transaction and one commit.
 *
 * Each append keeps its own expected revision and stays atomic: a refused append writes none of its
 * events and the others in the batch are written (a refusal is a result row here, not an error, so
 * it does not abort the transaction). Positions follow the batch order, xid8 * 1,000,000 + the
 * event's ordinal in the batch, so the ordering argument of the event-log migration holds: the whole
 * batch is one transaction under one xid. Stream rows are locked in stream-id order whatever the
 * batch order, so two batches naming the same streams wait for each other instead of deadlocking;
 * appends to one stream keep their batch order. One notification per batch.
 *
 * Arguments: per append its stream, expected revision (codes of append_events) and event count;
 * per event its append (1-based) and fields. One result row per append, in batch order:
 * next_revision and last_position, or, when refused, next_revision null and the stream's actual
 * revision (-1: no stream).
 */
export class AppendEventBatch1732250000006 implements MigrationInterface {
  name = 'AppendEventBatch1732250000006';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create function append_event_batch(
        p_streams text[], p_expected bigint[], p_counts int[],
        p_appends int[], p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[]
      ) returns table (next_revision bigint, last_position bigint, actual bigint)
      language plpgsql as $$
      declare
        appends int := coalesce(cardinality(p_streams), 0);
        total int := coalesce(cardinality(p_ids), 0);
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
           or cardinality(p_appends) <> total or cardinality(p_types) <> total or cardinality(p_data) <> total or cardinality(p_metadata) <> total
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
                   e.id, e.type, e.data, e.metadata
            from unnest(p_appends, p_ids, p_types, p_data, p_metadata) with ordinality as e(append, id, type, data, metadata, ordinal)
            where revisions[e.append] is not null;
          perform pg_notify('ledger_events', '');
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
    await q.query('drop function append_event_batch(text[], bigint[], int[], int[], uuid[], text[], jsonb[], jsonb[])');
  }
}
