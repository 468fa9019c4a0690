import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, portIsFree, startEmbeddedPostgres } from './embedded-postgres.js';

const run = promisify(execFile);

export const DEFAULT_EMBEDDED_PG_PORT = 54_329;
/** How long a cluster another process is starting or stopping is waited for. */
const SETTLE_TIMEOUT_MS = 60_000;
const POLL_MS = 100;
/** How long the connections of a process that just ended are given to leave the server. */
const CLIENTS_SETTLE_MS = 2_000;
const START_ATTEMPTS = 3;

/** The embedded cluster cannot be used; the message names the cause and the fix. Outside HTTP: the CLIs and the start of the service print it. */
export class EmbeddedClusterError extends Error {
  override readonly name = 'EmbeddedClusterError';
}

/**
 * The embedded cluster as the processes sharing a DATA_DIR see it. The server that runs on
 * `DATA_DIR/pg` is found from its own lock file, `postmaster.pid` (pid, port, socket directory and
 * state), so a CLI finds the service's cluster whatever port it runs on. The process that started it
 * records itself in `DATA_DIR/pg.owner.json`: a cluster whose owner has died (`kill -9`) is an
 * orphan, stopped cleanly and started anew by the next process, so that its log and its stop at
 * shutdown belong to a live process again.
 */
export interface RunningCluster {
  readonly pid: number;
  readonly port: number | undefined;
  /** Empty when the server listens on TCP only. */
  readonly socketDir: string;
  /** `starting`, `ready`, `stopping` or `standby`; empty while the server is still writing the file. */
  readonly status: string;
}

interface Owner {
  readonly pid: number;
  readonly postmasterPid: number;
}

export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive, under another user (the `postgres` user when this process is root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // An ended process that no one reaped yet (a zombie: its parent died and init here does not reap) is gone too.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** The server running on `clusterDir`, from its lock file; undefined when none runs. */
export async function readRunningCluster(clusterDir: string): Promise<RunningCluster | undefined> {
  let text: string;
  try {
    text = await readFile(join(clusterDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  // Lines: pid, data directory, start time, port, socket directory, listen address, shared memory key, status.
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  if (!processAlive(pid)) return undefined;
  const port = Number(lines[3]);
  return {
    pid,
    port: Number.isInteger(port) && port > 0 ? port : undefined,
    socketDir: (lines[4] ?? '').trim(),
    status: (lines[7] ?? '').trim(),
  };
}

async function readOwner(dataDir: string): Promise<Owner | undefined> {
  try {
    return JSON.parse(await readFile(join(dataDir, 'pg.owner.json'), 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}

function ownedByLiveProcess(owner: Owner | undefined, cluster: RunningCluster): boolean {
  return owner !== undefined && owner.postmasterPid === cluster.pid && processAlive(owner.pid);
}

async function readPassword(dataDir: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await readFile(join(dataDir, 'pg.json'), 'utf8')) as { password: string }).password;
  } catch {
    return undefined;
  }
}

function urlOf(password: string, cluster: RunningCluster & { port: number }, database: string): string {
  const tcpUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${cluster.port}/${database}`;
  const socket = cluster.socketDir !== '' && existsSync(join(cluster.socketDir, `.s.PGSQL.${cluster.port}`));
  return socket ? `${tcpUrl}?host=${encodeURIComponent(cluster.socketDir)}` : tcpUrl;
}

/** Client connections other than this one, once those of a process that just ended have left (bounded wait). */
async function otherClients(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const deadline = Date.now() + CLIENTS_SETTLE_MS;
    for (;;) {
      const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()`);
      if (rows[0].n === 0 || Date.now() > deadline) return rows[0].n;
      await sleep(POLL_MS);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

/** As root the cluster runs as the `postgres` user, and pg_ctl refuses to run as root. */
async function postgresUser(): Promise<{ uid?: number; gid?: number }> {
  if (userInfo().uid !== 0) return {};
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * Stops the server on `clusterDir`: cleanly by default (`pg_ctl stop -m fast`: open sessions end,
 * then a checkpoint); `immediate` is a crash without the power cut (no checkpoint: the next start
 * recovers from the WAL), which the chaos run uses.
 */
export async function stopCluster(clusterDir: string, mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const { pg_ctl: pgCtl } = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { pg_ctl: string };
  try {
    await run(pgCtl, ['stop', '-D', clusterDir, '-m', mode, '-w', '-t', String(SETTLE_TIMEOUT_MS / 1_000), '-s'], await postgresUser());
  } catch (error) {
    // It may have stopped by itself meanwhile.
    if ((await readRunningCluster(clusterDir)) === undefined) return;
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new EmbeddedClusterError(`could not stop the embedded PostgreSQL on ${clusterDir}: ${stderr || (error as Error).message}`);
  }
}

export interface EmbeddedClusterOptions {
  readonly dataDir: string;
  /** EMBEDDED_PG_PORT when set: then only that port; unset, the default port or, when taken, a free one. */
  readonly port: number | undefined;
  readonly database: string;
  /** What this process does about the cluster, for the person reading its log. */
  readonly log?: (line: string) => void;
}

export interface EmbeddedClusterHandle {
  readonly url: string;
  /** True when this process started the cluster; false when it joined one already running. */
  readonly started: boolean;
  /**
   * At exit: stops the cluster when this process is the last one using it and either started it or
   * outlived the process that did; otherwise leaves it running for the others.
   */
  stop(): Promise<void>;
}

/**
 * The embedded cluster under `dataDir`: joined when it runs (whatever its port), taken back when
 * its owner died, started here otherwise. Never a second server on the same data directory:
 * PostgreSQL's own lock file refuses it, and a process that loses that race joins the winner.
 */
export async function openEmbeddedCluster(options: EmbeddedClusterOptions): Promise<EmbeddedClusterHandle> {
  const clusterDir = join(options.dataDir, 'pg');
  const log = options.log ?? (() => undefined);
  const settleDeadline = Date.now() + SETTLE_TIMEOUT_MS;
  let lastStartError: unknown;
  for (let attempt = 0; attempt < START_ATTEMPTS;) {
    const running = await readRunningCluster(clusterDir);
    if (running !== undefined) {
      if ((running.status === 'ready' || running.status === 'standby') && running.port !== undefined) {
        const cluster = { ...running, port: running.port };
        const password = await readPassword(options.dataDir);
        if (password === undefined) {
          throw new EmbeddedClusterError(
            `a PostgreSQL (pid ${cluster.pid}, port ${cluster.port}) runs on ${clusterDir}, but its password file ${join(options.dataDir, 'pg.json')} is missing: ` +
              'stop that server, or set DATABASE_URL to a server you can reach',
          );
        }
        const url = await reachable(urlOf(password, cluster, options.database), cluster, clusterDir);
        if (!ownedByLiveProcess(await readOwner(options.dataDir), cluster) && (await otherClients(url)) === 0) {
          log(`the embedded PostgreSQL (pid ${cluster.pid}) outlived the process that started it: stopping it cleanly to start it anew`);
          await stopCluster(clusterDir);
          continue;
        }
        return joined(options, clusterDir, cluster.pid, url);
      }
      if (Date.now() > settleDeadline) {
        throw new EmbeddedClusterError(
          `the embedded PostgreSQL on ${clusterDir} (pid ${running.pid}) is still ${running.status || 'starting'} after ${SETTLE_TIMEOUT_MS / 1_000} s: ` +
            `wait for it, or stop that process (kill ${running.pid}) and run this again`,
        );
      }
      await sleep(POLL_MS);
      continue;
    }

    attempt++;
    const port = await choosePort(options, clusterDir, log);
    try {
      log(`starting the embedded PostgreSQL under ${options.dataDir} on port ${port}`);
      const handle = await startEmbeddedPostgres({ dataDir: options.dataDir, port, database: options.database });
      await writeFile(join(options.dataDir, 'pg.owner.json'), JSON.stringify({ pid: process.pid, postmasterPid: handle.pid } satisfies Owner));
      return {
        url: handle.url,
        started: true,
        stop: async () => {
          const others = await otherClients(handle.url).catch(() => 0);
          if (others > 0) {
            log(`leaving the embedded PostgreSQL running: ${others} other connection(s) use it; the last process out stops it`);
            handle.release();
            return;
          }
          await handle.stop();
          await rm(join(options.dataDir, 'pg.owner.json'), { force: true });
        },
      };
    } catch (error) {
      // Another process may have started it meanwhile (PostgreSQL's lock file stopped this one): join it.
      // With no port asked for, a port taken meanwhile is replaced by another.
      lastStartError = error;
      const raced = /lock file|already in use|could not bind|could not create any TCP/i.test(error instanceof Error ? error.message : '');
      if ((await readRunningCluster(clusterDir)) === undefined && (!raced || options.port !== undefined)) break;
    }
  }
  const cause = lastStartError instanceof Error ? lastStartError.message : String(lastStartError);
  throw new EmbeddedClusterError(`the embedded PostgreSQL under ${options.dataDir} could not start: ${cause}. ` + `Fix that cause, or set DATABASE_URL to another server`);
}

async function choosePort(options: EmbeddedClusterOptions, clusterDir: string, log: (line: string) => void): Promise<number> {
  if (options.port !== undefined) {
    if (await portIsFree(options.port)) return options.port;
    throw new EmbeddedClusterError(
      `EMBEDDED_PG_PORT ${options.port} is in use by another program, and no embedded PostgreSQL runs on ${clusterDir}: ` +
        'set EMBEDDED_PG_PORT to a free port, or leave it unset to let the embedded PostgreSQL choose one',
    );
  }
  if (await portIsFree(DEFAULT_EMBEDDED_PG_PORT)) return DEFAULT_EMBEDDED_PG_PORT;
  const port = await freePort();
  log(`port ${DEFAULT_EMBEDDED_PG_PORT} is in use by another program: the embedded PostgreSQL takes port ${port} (the other commands find it under DATA_DIR)`);
  return port;
}

/** Answers the URL once a connection works; otherwise fails with the cause and the fix. */
async function reachable(url: string, cluster: RunningCluster & { port: number }, clusterDir: string): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return url;
  } catch (error) {
    throw new EmbeddedClusterError(
      `could not connect to the embedded PostgreSQL on ${clusterDir} (pid ${cluster.pid}, port ${cluster.port}): ${(error as Error).message}. ` +
        `If no PostgreSQL runs as pid ${cluster.pid}, remove ${join(clusterDir, 'postmaster.pid')}; otherwise stop it and run this again`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

function joined(options: EmbeddedClusterOptions, clusterDir: string, postmasterPid: number, url: string): EmbeddedClusterHandle {
  return {
    url,
    started: false,
    stop: async () => {
      const running = await readRunningCluster(clusterDir);
      if (running?.pid !== postmasterPid || ownedByLiveProcess(await readOwner(options.dataDir), running)) return;
      // The process that started it has ended meanwhile, leaving it to the last one out: this one, if no one else is connected.
      if ((await otherClients(url).catch(() => 1)) > 0) return;
      await stopCluster(clusterDir);
      await rm(join(options.dataDir, 'pg.owner.json'), { force: true });
    },
  };
}
