import { afterAll, expect, it } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/database/embedded-postgres.js';
import { DIST, exited, runNode } from '../support/processes.js';
import { describeOnPostgresProjectOnly } from '../support/store-independent.js';

const START_UP_CONTEXTS = ['InstanceLoader', 'RoutesResolver', 'RouterExplorer'];

let child: ChildProcess | undefined;
let dataDir: string | undefined;

afterAll(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (child !== undefined) await exited(child);
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describeOnPostgresProjectOnly('Start-up configuration errors', 'no store is reached', () => {
  it('in production without PUBLIC_BASE_URL, the service refuses to start, naming the variable (exit 78)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ledger-start-up-config-'));
    try {
      const run = await runNode(DIST.main, [], { env: { PATH: process.env.PATH, NODE_ENV: 'production', DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' }, timeoutMs: 30_000 });
      expect(run.code).toBe(78);
      expect(run.stderr).toContain('PUBLIC_BASE_URL is required when NODE_ENV=production');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeOnPostgresProjectOnly('Start-up without a mail transport', 'no store is reached', () => {
  it('on an external database with neither SMTP_URL nor CONSOLE_MAIL_LOG_ONLY, the service refuses to start, naming both (exit 78)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ledger-start-up-mail-'));
    try {
      const env = {
        PATH: process.env.PATH,
        DATA_DIR: dir,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: 'postgres://ledger:secret@127.0.0.1:1/ledger',
        DATA_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
      };
      const run = await runNode(DIST.main, [], { env, timeoutMs: 30_000 });
      expect(run.code).toBe(78);
      expect(run.stderr).toMatch(/SMTP_URL is required outside the embedded default.*CONSOLE_MAIL_LOG_ONLY=true/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeOnPostgresProjectOnly('The first start on the embedded default, stdout not a terminal', 'it runs its own embedded PostgreSQL whatever the store under test', () => {
  it('logs JSON only: no module or route lines at info, and no admin token or demo key, but where to find them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ledger-start-up-'));
    dataDir = dir;
    let stdout = '';
    let stderr = '';
    child = spawn(process.execPath, [DIST.main], {
      env: { PATH: process.env.PATH, DATA_DIR: dir, EMBEDDED_PG_PORT: String(await freePort()), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const started = Date.now();
    while (!stdout.includes('First run:') && Date.now() - started < 90_000 && child.exitCode === null) await new Promise((wait) => setTimeout(wait, 100));
    child.kill('SIGTERM');
    await exited(child);
    expect(stdout).toContain('First run:');

    // Every line on stdout is a JSON log line: nothing printed beside the log stream.
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: string; context?: string; msg: string });
    expect(lines.filter((line) => line.context !== undefined && START_UP_CONTEXTS.includes(line.context))).toEqual([]);
    expect(lines.length).toBeLessThan(20);

    const adminToken = (await readFile(join(dir, 'admin-token'), 'utf8')).trim();
    const everything = stdout + stderr;
    expect(everything).not.toContain(adminToken);
    expect(everything).not.toMatch(/service_test_[A-Za-z0-9_-]{20,}/);
    expect(everything).not.toContain('X-Service-Key');
    // Where to find them instead, once each.
    expect(lines.filter((line) => line.msg.includes(`read it from ${join(dir, 'admin-token')}`))).toHaveLength(1);
    const firstRun = lines.filter((line) => line.msg.startsWith('First run:'));
    expect(firstRun).toHaveLength(1);
    expect(firstRun[0].msg).toMatch(/cannot be shown again .* issue another with "npm run admin -- key issue org_[0-9A-Za-z]+ --env test"/);
  });
});
