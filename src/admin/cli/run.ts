import { CommanderError } from 'commander';
import type { INestApplicationContext } from '@nestjs/common';
import type { Runtime } from '../../config/runtime.js';
import { clearRecordedPosition, type Job, loadKit, recordedPosition, UsageError } from './kit.js';
import { fail, human } from './output.js';
import { buildProgram, type ProgramIo } from './program.js';

/**
 * One run of the admin CLI, from the arguments to the exit code: parse, load the configuration,
 * start the application context, do the command's job, wait for it to be in force, print, close.
 * `cli.ts` runs it once per process on the process's environment and streams. Given `io`, it reads
 * that environment and writes everything (answer, errors, help and log lines) there instead, so a
 * caller in the same process (the CLI's end-to-end tests) runs the same commands without paying
 * for a Node start-up each.
 */
export async function runAdmin(argv: readonly string[], io?: ProgramIo): Promise<number> {
  const env = io?.env ?? process.env;
  const stdout = io?.stdout ?? ((text: string) => void process.stdout.write(text));
  const stderr = io?.stderr ?? ((text: string) => void process.stderr.write(text));
  clearRecordedPosition();
  let job: Job | undefined;
  const program = buildProgram(
    (next) => {
      job = next;
    },
    { env, stdout, stderr },
  );
  try {
    program.parse(argv, { from: 'node' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      stderr(`error: usage: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (job === undefined) {
    program.outputHelp({ error: true });
    return 2;
  }
  const json = program.opts<{ json?: boolean }>().json === true;

  const kit = await loadKit();
  let config;
  try {
    config = kit.loadConfig(env);
  } catch (error) {
    return fail(error, stderr);
  }
  // Logs go to stderr as JSON lines (warnings and errors unless LOG_LEVEL asks for more): stdout is the command's answer.
  const logDestination = io === undefined ? kit.pino.destination({ dest: 2, sync: true }) : { write: stderr };
  const logger = kit.createLogger({ ...config, logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }, logDestination);
  const database = await kit.resolveDatabase(config, { log: (line) => logger.info(line) });
  let app: INestApplicationContext | undefined;
  try {
    await kit.runMigrations(database.url);
    // No projection workers and no first-run demo in a one-shot command.
    const runtime: Runtime = { config: { ...config, runProjections: 'false' }, databaseUrl: database.url, embedded: false, adminToken: undefined };
    app = await kit.NestFactory.createApplicationContext(kit.AppModule.forRoot(runtime), { bufferLogs: true, abortOnError: false });
    app.useLogger(new kit.PinoNestLogger(logger));
    await app.init();
    const output = await job(app, kit);
    const position = recordedPosition();
    const settled = position === null ? undefined : await (await import('./settle.js')).settle(app, position);
    if (json) {
      stdout(`${JSON.stringify(output.data, null, 2)}\n`);
      if (settled !== undefined) stderr(`${settled.message}\n`);
    } else {
      stdout(`${human(output.human ?? output.data)}\n`);
      if (output.meta !== undefined) stdout(`\n${human(output.meta)}\n`);
      if (output.note !== undefined) stdout(`\n${output.note}\n`);
      if (settled !== undefined) (settled.state === 'behind' ? stderr : stdout)(`\n${settled.message}\n`);
    }
    return settled?.state === 'behind' ? 1 : 0;
  } catch (error) {
    return fail(error, stderr);
  } finally {
    await app?.close().catch(() => undefined);
    await database.handle?.stop().catch(() => undefined);
  }
}
