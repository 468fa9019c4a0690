import type pg from 'pg';

/** How long a drop waits for the database's sessions to end before it ends them itself. */
const DROP_GRACE_MS = 2_000;

/**
 * Drops a database its callers have finished with (tests', benchmarks'). A pg pool's end() resolves
 * before its connections have closed; forcing the drop at once terminates a closing connection, whose
 * error its pool then throws with no listener, ending the process (seen on Node 24 under load, and at
 * a benchmark's cleanup). So: a moment for the sessions to go, then force whatever is left.
 */
export async function dropDatabaseWhenIdle(admin: pg.ClientBase, name: string): Promise<void> {
  const deadline = Date.now() + DROP_GRACE_MS;
  while (Date.now() < deadline) {
    const { rows } = await admin.query<{ sessions: number }>('select count(*)::int as sessions from pg_stat_activity where datname = $1', [name]);
    if (rows[0].sessions === 0) break;
    await new Promise((wake) => setTimeout(wake, 20));
  }
  await admin.query(`drop database if exists ${name} with (force)`);
}
