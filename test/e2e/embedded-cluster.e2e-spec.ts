import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../../src/database/embedded-cluster.js';
import { freePort } from '../../src/database/embedded-postgres.js';
import { DIST, exited, type Run, runNode, startNodeProcess } from '../support/processes.js';

const { main: MAIN, admin: ADMIN, audit: AUDIT, projections: PROJECTIONS } = DIST;

/**
 * The service and the CLIs as separate processes sharing one embedded cluster: every process runs
 * in `home` with no variables but PATH (and the one a case is about), so DATA_DIR is `home/.data`,
 * as for a person at a terminal. One cluster is created for the file and reused by every case.
 */
let home: string;
let clusterDir: string;
let service: ChildProcess | undefined;
let output: () => string = () => '';

async function startService(env: Record<string, string> = {}): Promise<void> {
  const started = await startNodeProcess(MAIN, {
    cwd: home,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(await freePort()), ...env },
    ready: (output) => output.includes('Listening on'),
    timeoutMs: 60_000,
  });
  service = started.child;
  output = started.output;
}

function cli(script: string, args: readonly string[], env: Record<string, string> = {}) {
  return runNode(script, args, { cwd: home, env: { PATH: process.env.PATH, ...env }, timeoutMs: 60_000 });
}

async function postmasterFile(): Promise<string[] | undefined> {
  try {
    return (await readFile(join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return undefined;
  }
}

/**
 * Every server (postmaster) whose command line names this cluster's directory, whoever started it.
 * A process that a postmaster has just forked (a backend, an I/O or autovacuum worker) shows the
 * postmaster's command line until it sets its own title: one whose parent is among them is its
 * child, not a second server.
 */
async function postgresOnDataDir(): Promise<number[]> {
  const found = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(join('/proc', entry, 'cmdline'), 'utf8').catch(() => '');
    if (!commandLine.includes('postgres') || !commandLine.split('\0').includes(clusterDir)) continue;
    const stat = await readFile(join('/proc', entry, 'stat'), 'utf8').catch(() => '');
    found.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  return [...found.keys()].filter((pid) => !found.has(found.get(pid) as number));
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'ledger-cluster-'));
  // As root the cluster runs as the `postgres` user, which must reach DATA_DIR under here.
  await chmod(home, 0o755);
  clusterDir = join(home, '.data', 'pg');
});

afterAll(async () => {
  if (service !== undefined && service.exitCode === null && service.signalCode === null) service.kill('SIGKILL');
  if (service !== undefined) await exited(service);
  // A failed case may leave the server running: stop it (SIGINT is PostgreSQL's fast shutdown).
  for (const pid of await postgresOnDataDir()) process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 30_000;
  while ((await postgresOnDataDir()).length > 0 && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 100));
  await rm(home, { recursive: true, force: true });
});

describe('The CLIs and the service on one embedded cluster', () => {
  let organizationId: string;

  it('beside a service on a non-default port, each CLI with no variables set uses its cluster, and starts no other', async () => {
    const pgPort = await freePort();
    await startService({ EMBEDDED_PG_PORT: String(pgPort) });
    const postmaster = await postmasterFile();
    expect(postmaster?.[3]).toBe(String(pgPort));

    const listed = await cli(ADMIN, ['--json', 'org', 'list']);
    expect(listed).toMatchObject({ code: 0 });
    organizationId = (JSON.parse(listed.stdout) as { id: string }[])[0].id;
    expect(organizationId).toMatch(/^org_/);

    const runs = [
      await cli(AUDIT, ['--org', organizationId, '--env', 'test']),
      await cli(PROJECTIONS, ['status']),
      await cli(PROJECTIONS, ['rebuild', 'organizations']),
      // The port an earlier message advised: the cluster is found on disk whatever port is asked for.
      await cli(ADMIN, ['org', 'list'], { EMBEDDED_PG_PORT: String(await freePort()) }),
    ];
    for (const run of runs) {
      expect(run.stderr).not.toContain('starting the embedded PostgreSQL');
      expect(run).toMatchObject({ code: 0 });
    }
    expect(runs[1].stdout).toContain('organizations');
    expect(runs[3].stdout).toContain(organizationId);
    // Still the service's server, and the only one on this data directory.
    expect((await postmasterFile())?.[0]).toBe(postmaster?.[0]);
    expect(await postgresOnDataDir()).toEqual([Number(postmaster?.[0])]);
  });

  it('after a kill -9 of the service, the next start takes its orphaned cluster back, and SIGTERM then leaves no PostgreSQL running', async () => {
    const orphan = Number((await postmasterFile())?.[0]);
    service?.kill('SIGKILL');
    await exited(service as ChildProcess);
    expect(processAlive(orphan)).toBe(true);

    await startService();
    expect(output()).toContain(`the embedded PostgreSQL (pid ${orphan}) outlived the process that started it`);
    expect(processAlive(orphan)).toBe(false);
    const restarted = Number((await postmasterFile())?.[0]);
    expect(await postgresOnDataDir()).toEqual([restarted]);

    service?.kill('SIGTERM');
    await exited(service as ChildProcess);
    expect(service?.exitCode).toBe(0);
    expect(await postmasterFile()).toBeUndefined();
    expect(await postgresOnDataDir()).toEqual([]);
  });

  it('with the service stopped, each CLI starts the cluster itself and stops it when done', async () => {
    const runs: [string, Run][] = [
      ['admin', await cli(ADMIN, ['org', 'list'])],
      ['audit', await cli(AUDIT, ['--org', organizationId, '--env', 'test'])],
      ['status', await cli(PROJECTIONS, ['status'])],
      ['rebuild', await cli(PROJECTIONS, ['rebuild', 'organizations'])],
    ];
    for (const [name, run] of runs) {
      expect([name, run.code, run.code === 0 ? '' : run.stderr]).toEqual([name, 0, '']);
    }
    expect(runs[0][1].stdout).toContain(organizationId);
    expect(await postmasterFile()).toBeUndefined();
    expect(await postgresOnDataDir()).toEqual([]);
  });

  it('EMBEDDED_PG_PORT taken by another program: each CLI names the cause and the fix and exits non-zero', async () => {
    const squatter = createServer();
    const port = await new Promise<number>((resolvePort) => squatter.listen(0, '127.0.0.1', () => resolvePort((squatter.address() as { port: number }).port)));
    try {
      for (const [script, args] of [
        [ADMIN, ['org', 'list']],
        [AUDIT, ['--org', organizationId, '--env', 'test']],
        [PROJECTIONS, ['status']],
      ] as const) {
        const run = await cli(script, args, { EMBEDDED_PG_PORT: String(port) });
        expect(run.code).not.toBe(0);
        expect(run.stderr).toContain(`EMBEDDED_PG_PORT ${port} is in use by another program`);
        expect(run.stderr).toContain('set EMBEDDED_PG_PORT to a free port, or leave it unset');
        expect(run.stderr).not.toContain('undefined');
      }
    } finally {
      squatter.close();
    }
    expect(await postgresOnDataDir()).toEqual([]);
  });
});
