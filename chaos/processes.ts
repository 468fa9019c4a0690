import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';

const sleep = (ms: number) => new Promise<void>((wake) => setTimeout(wake, ms));

export interface ProcessExit {
  readonly name: string;
  readonly code: number | null;
  readonly signal: string | null;
  /** Milliseconds since the run began. */
  readonly atMs: number;
}

export interface ServiceProcessOptions {
  readonly name: string;
  readonly script: string;
  readonly args?: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Appended to by every start of this process (stdout and stderr). */
  readonly logFile: string;
  /** Polled every 200 ms after a start until it answers true; given the new process's pid and when it was started. */
  readonly ready: (started: { readonly pid: number | undefined; readonly startedAt: number }) => Promise<boolean>;
  readonly runStartedAt: number;
  /** Called when the process ended without the harness killing or stopping it. */
  readonly onUnexpectedExit: (exit: ProcessExit) => void;
}

/**
 * One process of the service (an API or the projection worker) built in dist/, run as
 * `node <script>` with `env` alone, as a supervisor would: killed with SIGKILL on purpose and
 * started again, and restarted when it ends by itself (which is reported).
 */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  private log: WriteStream;
  private intended = false;
  private restarting: Promise<void> | undefined;
  private closed = false;
  /** False from a kill until the process is started again and ready: the load sends it nothing meanwhile. */
  up = false;

  constructor(private readonly options: ServiceProcessOptions) {
    this.log = createWriteStream(options.logFile, { flags: 'a' });
  }

  get name(): string {
    return this.options.name;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(timeoutMs = 90_000): Promise<void> {
    this.intended = false;
    const child = spawn(process.execPath, [this.options.script, ...(this.options.args ?? [])], { env: this.options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.log.write(`\n----- ${new Date().toISOString()} start, pid ${child.pid}\n`);
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    child.once('exit', (code, signal) => {
      this.up = false;
      this.log.write(`----- ${new Date().toISOString()} pid ${child.pid} exited, code ${code}, signal ${signal}\n`);
      if (this.intended || this.closed || this.child !== child) return;
      this.options.onUnexpectedExit({ name: this.name, code, signal, atMs: Date.now() - this.options.runStartedAt });
      // As a supervisor would: start it again (its failure to start is reported by the next check).
      this.restarting = sleep(1_000)
        .then(() => (this.closed ? undefined : this.start()))
        .catch((error: unknown) => {
          this.log.write(`----- restart failed: ${String(error)}\n`);
        })
        .finally(() => {
          this.restarting = undefined;
        });
    });
    const started = { pid: child.pid, startedAt: Date.now() };
    const deadline = started.startedAt + timeoutMs;
    while (!(await this.options.ready(started).catch(() => false))) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${this.name} exited while starting; see ${this.options.logFile}:\n${this.tail()}`);
      if (Date.now() > deadline) throw new Error(`${this.name} was not ready within ${timeoutMs / 1_000} s; see ${this.options.logFile}:\n${this.tail()}`);
      await sleep(200);
    }
    this.up = true;
  }

  /** kill -9, then waits for the exit. */
  async kill9(): Promise<void> {
    const child = this.child;
    this.up = false;
    this.intended = true;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
    child.kill('SIGKILL');
    await exited;
  }

  /** Running, or being restarted after it ended by itself. */
  async ensureRunning(): Promise<void> {
    if (this.restarting !== undefined) await this.restarting;
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) await this.start();
  }

  /** SIGTERM (a graceful stop), SIGKILL after `graceMs`. */
  async stop(graceMs = 30_000): Promise<void> {
    this.closed = true;
    this.up = false;
    if (this.restarting !== undefined) await this.restarting;
    const child = this.child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    await new Promise<void>((resolveEnd) => this.log.end(resolveEnd));
  }

  private tail(): string {
    try {
      return readFileSync(this.options.logFile, 'utf8').slice(-3_000);
    } catch {
      return '';
    }
  }
}
