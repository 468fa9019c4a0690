import type { LogFolds } from '../../src/event-store/event-store.port.js';
import type { DatabaseFold, DatabaseFolder, ProjectionContext } from '../projection.js';

/**
 * verification_counts from the rows: a row per group and status held by some row, and the
 * group's pending row, which the first request of the group created, even when none is pending
 * any more (count 0), as `handle`'s upserts leave it.
 */
const insertCounts = (counts: string, table: string) => `
  insert into ${counts} (organization_id, environment, scope, status, count)
  select organization_id, environment, scope, status, sum(count) from (
    select organization_id, environment, scope, status, count(*) as count from ${table} group by 1, 2, 3, 4
    union all
    select distinct organization_id, environment, scope, 'pending', 0 from ${table}) counted
  group by 1, 2, 3, 4`;

/**
 * verificationsProjection.foldInDatabase: the rows in one statement of the log's folds
 * (LogFolds.verificationRows), checked by LogFolds.verificationsOddEvents, then the counts above.
 */
export function verificationsFolder(folds: LogFolds, categories: readonly string[]): DatabaseFolder {
  return {
    oddEvents: (run, upToPosition) => folds.verificationsOddEvents(run, categories, upToPosition),
    async fold(context: ProjectionContext, upToPosition: bigint, part: number, parts: number): Promise<DatabaseFold> {
      await folds.verificationRows(context.query.bind(context), context.table('verifications'), categories, upToPosition, part, parts);
      return { outcome: 'folded' };
    },
    async finish(context: ProjectionContext): Promise<void> {
      await context.query(insertCounts(context.table('verification_counts'), context.table('verifications')));
    },
  };
}
