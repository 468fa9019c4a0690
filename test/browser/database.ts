import pg from 'pg';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Runs `sql` on the database of the service under test, joining its embedded cluster the way the
 * CLIs do (the built src/database/embedded-cluster.js, from the service's DATA_DIR).
 */
export async function onServiceDatabase(sql: string, parameters: unknown[]): Promise<number> {
  const dataDir = process.env.CONSOLE_DATA_DIR;
  if (dataDir === undefined) throw new Error('CONSOLE_DATA_DIR is not set: the global setup starts the service');
  const { openEmbeddedCluster } = (await import(pathToFileURL(resolve('dist/src/database/embedded-cluster.js')).href)) as {
    openEmbeddedCluster: (options: { dataDir: string; database: string }) => Promise<{ url: string; stop(): Promise<void> }>;
  };
  const cluster = await openEmbeddedCluster({ dataDir, database: 'ledger' });
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  try {
    return (await client.query(sql, parameters)).rowCount ?? 0;
  } finally {
    await client.end();
    await cluster.stop();
  }
}
