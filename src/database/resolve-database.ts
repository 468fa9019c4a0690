import type { AppConfig } from '../config/config.js';
import type { EmbeddedClusterHandle } from './embedded-cluster.js';

export const EMBEDDED_DATABASE = 'ledger';

export interface ResolvedDatabase {
  readonly url: string;
  readonly embedded: boolean;
  /** Set on the embedded default; `stop()` at exit stops the cluster when this process is the last one using it. */
  readonly handle: EmbeddedClusterHandle | undefined;
}

/**
 * The database a process uses: DATABASE_URL; else the embedded cluster under DATA_DIR, joined
 * whatever its port when another process (the running service) runs it, started here otherwise.
 * The service and every CLI come through here, so that `npm run admin` works beside `npm start`.
 */
export async function resolveDatabase(config: AppConfig, options: { log?: (line: string) => void } = {}): Promise<ResolvedDatabase> {
  if (config.database.url !== undefined) return { url: config.database.url, embedded: false, handle: undefined };
  // Loaded only here: a command given DATABASE_URL does not pay for the embedded server's modules.
  const { openEmbeddedCluster } = await import('./embedded-cluster.js');
  const handle = await openEmbeddedCluster({ dataDir: config.dataDir, port: config.database.embeddedPort, database: EMBEDDED_DATABASE, log: options.log });
  return { url: handle.url, embedded: true, handle };
}
