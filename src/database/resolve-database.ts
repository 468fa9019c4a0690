import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { AppConfig } from '../config/config.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres.js';

export const EMBEDDED_DATABASE = 'ledger';

export interface ResolvedDatabase {
  readonly url: string;
  readonly embedded: boolean;
  /** Set when this process started the embedded cluster and must stop it. */
  readonly handle: EmbeddedPostgresHandle | undefined;
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The database a process uses: DATABASE_URL; else the embedded cluster under DATA_DIR, joined when
 * another process (the running service) already started it, started here otherwise. The CLIs use
 * this so that `npm run admin` works beside `npm start`.
 */
export async function resolveDatabase(config: AppConfig, options: { log?: (line: string) => void } = {}): Promise<ResolvedDatabase> {
  if (config.database.url !== undefined) return { url: config.database.url, embedded: false, handle: undefined };
  const credentialsFile = join(config.dataDir, 'pg.json');
  if (existsSync(credentialsFile)) {
    const { password } = JSON.parse(await readFile(credentialsFile, 'utf8')) as { password: string };
    const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${config.database.embeddedPort}/${EMBEDDED_DATABASE}`;
    if (await reachable(url)) return { url, embedded: true, handle: undefined };
  }
  options.log?.(`No DATABASE_URL: starting the embedded PostgreSQL under ${config.dataDir}`);
  const handle = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.database.embeddedPort, database: EMBEDDED_DATABASE });
  return { url: handle.url, embedded: true, handle };
}
