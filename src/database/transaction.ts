import type pg from 'pg';

/**
 * Runs `work` in one transaction on a client of `pool`: committed when it resolves, rolled back
 * when it throws (the error is rethrown, not the rollback's), the client released either way.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
