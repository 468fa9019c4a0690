import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { resolve } from 'node:path';

// The global setup built dist/ from the current sources: the service and the CLIs as `npm start` and `npm run …` run them.
export const DIST = {
  main: resolve('dist/src/main.js'),
  admin: resolve('dist/src/admin/cli.js'),
  audit: resolve('dist/src/audit/audit-cli.js'),
  projections: resolve('dist/projections/cli.js'),
  chaos: resolve('dist/chaos/chaos.js'),
} as const;

/** Resolves once `child` has exited (at once when it already has). */
export const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));

const sleep = (ms: number) => new Promise<void>((wake) => setTimeout(wake, ms));

export interface NodeProcess {
  readonly child: ChildProcess;
  /** The newest `keepChars` characters of its stdout and stderr, interleaved as they came. */
  output(): string;
}

export interface StartOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Polled every 100 ms until it answers true; the process failing or the deadline passing first throws, with its output. */
  readonly ready: (output: string) => boolean | Promise<boolean>;
  readonly timeoutMs?: number;
  readonly keepChars?: number;
}

/** Starts `script` under this Node with `env` alone (nothing inherited), collecting its output, and waits until it is ready. */
export async function startNodeProcess(script: string, options: StartOptions): Promise<NodeProcess> {
  const keepChars = options.keepChars ?? 100_000;
  let output = '';
  const child = spawn(process.execPath, [script], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (chunk: Buffer) => {
    output = `${output}${chunk.toString()}`.slice(-keepChars);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const started: NodeProcess = { child, output: () => output };
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (!(await options.ready(output))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${script} did not start:\n${output.slice(-3_000)}`);
    await sleep(100);
  }
  return started;
}

/** A readiness check: the service at `baseUrl` answers its liveness route. */
export const healthy = (baseUrl: string) => async () =>
  (await fetch(`${baseUrl}/v1/health`).then(
    (response) => response.status,
    () => 0,
  )) === 200;

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `script` with `args` to its end under this Node with `env` alone; a non-zero exit is answered, not thrown. */
export function runNode(script: string, args: readonly string[], options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string; readonly timeoutMs?: number }): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    execFile(process.execPath, [script, ...args], { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? 60_000 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') reject(error);
      else resolveRun({ code: error === null ? 0 : (error.code as number), stdout, stderr });
    });
  });
}
