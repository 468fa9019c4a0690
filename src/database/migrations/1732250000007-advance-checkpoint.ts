import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `advance_projection_checkpoint`: a projection batch's guarded checkpoint update as one function,
 * so that the runner sends it and its `commit` in one round trip. It raises (SQLSTATE P0002,
 * message `checkpoint_moved`) when the row no longer holds the position the batch started from —
 * a second runner, or a rebuild's swap, moved it — and the raise aborts the transaction before the
 * `commit` that follows it in the same query string could run.
 */
export class AdvanceCheckpoint1732250000007 implements MigrationInterface {
  name = 'AdvanceCheckpoint1732250000007';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create function advance_projection_checkpoint(p_name text, p_from bigint, p_to bigint, p_events integer, p_state text)
      returns void language plpgsql as $$
      begin
        update projection_checkpoints
           set position = p_to, events_processed = events_processed + p_events, updated_at = now(), state = p_state, error = null, failed_position = null
         where name = p_name and position = p_from;
        if not found then
          raise exception 'checkpoint_moved' using errcode = 'P0002';
        end if;
      end $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop function if exists advance_projection_checkpoint(text, bigint, bigint, integer, text)');
  }
}
