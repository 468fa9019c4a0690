import { createApp } from './app.factory.js';
import { assertServesHttp, ConfigError, loadConfig } from './config/config.js';
import { resolveDatabase } from './database/resolve-database.js';
import { embeddedAdminToken } from './admin/admin-token.js';
import { installGracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { createLogger, flushLogger } from './logging/logger.js';
import { warnOfPlainPersonalData } from './maintenance/plain-text-warning.js';
import { EVENT_STORE } from './event-store/event-store.port.js';
import { join } from 'node:path';
import type { Logger } from 'pino';

async function main(): Promise<Logger> {
  let config;
  try {
    config = loadConfig();
    assertServesHttp(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const logger = createLogger(config);
  try {
    await start(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, 'failed to start');
    await flushLogger(logger);
    process.exit(1);
  }
  return logger;
}

async function start(config: ReturnType<typeof loadConfig>, logger: Logger): Promise<void> {
  const database = await resolveDatabase(config, { log: (line) => logger.info(line) });
  const embedded = database.handle;

  let adminToken = config.admin.token;
  if (adminToken === undefined && database.embedded) {
    const generated = await embeddedAdminToken(config.dataDir);
    adminToken = generated.token;
    if (generated.created && process.stdout.isTTY === true) {
      // For the person at the terminal, once; deliberately not a log line (logs are shipped elsewhere).
      process.stdout.write(`\nAdmin API token (generated on first run, kept in ${config.dataDir}/admin-token):\n  ${adminToken}\n\n`);
    } else if (generated.created) {
      // Not a terminal: the output is a log, and a log never holds the token.
      logger.info(
        { adminTokenFile: join(config.dataDir, 'admin-token') },
        `Generated the admin API token on first run; it is not logged: read it from ${join(config.dataDir, 'admin-token')}`,
      );
    }
  } else if (adminToken === undefined) {
    logger.warn('ADMIN_TOKEN is not set: the admin API answers 404');
  }

  const app = await createApp({ config, databaseUrl: database.url, embedded: database.embedded, adminToken }, { logger });
  installGracefulShutdown({ app, logger, timeoutMs: config.operations.shutdownTimeoutMs, afterClose: async () => embedded?.stop() });

  // Before listening, so that the warning (if any) is logged before the line that says the service is up.
  await warnOfPlainPersonalData({ store: app.get(EVENT_STORE), logger });
  await app.listen(config.port, config.host);
  const address = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`;
  logger.info(
    { eventStore: config.eventStore.kind, docs: config.operations.docsEnabled, metrics: config.operations.metricsEnabled, console: `${address}/console` },
    `Listening on ${address}; the console is at ${address}/console`,
  );
  // For the person at the terminal: where to sign up and run a first check.
  if (process.stdout.isTTY === true) process.stdout.write(`\nOpen the console: ${address}/console (sign up, then run a sandbox check in the Playground)\n\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
