import { CommanderError } from 'commander';
import type { INestApplicationContext } from '@nestjs/common';
import type { Runtime } from '../config/runtime.js';
import { type Job, loadKit, recordedPosition, UsageError } from './cli/kit.js';
import { fail, human } from './cli/output.js';
import { buildProgram } from './cli/program.js';

/**
 * `npm run admin -- <command>`: the admin API's commands for operators without HTTP access,
 * dispatched through the same command handlers. Exit codes: 0 done, 1 refused or failed, 2 usage.
 * The commands are in cli/, one file per group.
 */

async function main(argv: readonly string[]): Promise<number> {
  let job: Job | undefined;
  const program = buildProgram((next) => {
    job = next;
  });
  try {
    program.parse(argv as string[], { from: 'node' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      process.stderr.write(`error: usage: ${error.message}\n`);
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
    config = kit.loadConfig();
  } catch (error) {
    return fail(error);
  }
  // Logs go to stderr as JSON lines (warnings and errors unless LOG_LEVEL asks for more): stdout is the command's answer.
  const logger = kit.createLogger({ ...config, logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }, kit.pino.destination({ dest: 2, sync: true }));
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
    const settled = position === null ? undefined : await (await import('./cli/settle.js')).settle(app, position);
    if (json) {
      process.stdout.write(`${JSON.stringify(output.data, null, 2)}\n`);
      if (settled !== undefined) process.stderr.write(`${settled.message}\n`);
    } else {
      process.stdout.write(`${human(output.human ?? output.data)}\n`);
      if (output.meta !== undefined) process.stdout.write(`\n${human(output.meta)}\n`);
      if (output.note !== undefined) process.stdout.write(`\n${output.note}\n`);
      if (settled !== undefined) (settled.state === 'behind' ? process.stderr : process.stdout).write(`\n${settled.message}\n`);
    }
    return settled?.state === 'behind' ? 1 : 0;
  } catch (error) {
    return fail(error);
  } finally {
    await app?.close().catch(() => undefined);
    await database.handle?.stop().catch(() => undefined);
  }
}

main(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(fail(error)),
);
