import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../src/lifecycle/node-flags.js';

/** The admin token the browser tests' service runs with: the operators' console is bootstrapped with it. */
export const BROWSER_ADMIN_TOKEN = 'browser-tests-admin-token-0123456789';

async function freePort(): Promise<number> {
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

export interface RunningService {
  readonly baseUrl: string;
  /** The service's DATA_DIR: its embedded PostgreSQL cluster can be joined from there. */
  readonly dataDir: string;
  stop(): Promise<void>;
}

/**
 * The service as `npm start` runs it: built, on the embedded default (its own PostgreSQL cluster
 * under a data directory of its own), with the console at /console. Its output goes to
 * test-results/service.log.
 */
export async function startService(): Promise<RunningService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'console-browser-'));
  const port = await freePort();
  await mkdir(resolve('test-results'), { recursive: true });
  const log = createWriteStream(resolve('test-results', 'service.log'));
  const child: ChildProcess = spawn(process.execPath, [...SERVICE_NODE_FLAGS, 'dist/src/main.js'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_TOKEN: BROWSER_ADMIN_TOKEN,
      NODE_ENV: 'development',
      DATABASE_URL: '',
      EVENT_STORE: 'postgres',
      LOG_LEVEL: 'info',
      // Every test signs up from 127.0.0.1: more than the default 30 mail-sending requests an hour per address.
      CONSOLE_MAIL_REQUESTS_PER_HOUR: '100000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise<void>((done) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          done();
        }, 30_000);
        child.once('exit', () => {
          clearTimeout(timer);
          done();
        });
      });
    }
    log.end();
    await rm(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the service exited with ${child.exitCode} before it listened: see test-results/service.log`);
    }
    try {
      const response = await fetch(`${baseUrl}/console/`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('the service did not answer within 120 s: see test-results/service.log');
    }
    await new Promise((wake) => setTimeout(wake, 250));
  }
  return { baseUrl, dataDir, stop };
}
