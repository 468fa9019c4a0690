// Jest runs global setup outside its module system, so this file is plain ESM and uses the
// swc-compiled sources (built here first, in well under a second).
import { readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';

const TEST_DATA_DIR = resolve('.data', 'test');
export const TEMPLATE_DATABASE = 'ledger_test_template';

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Clusters and compiled test servers left behind by a killed run (named after its process id). */
async function removeStaleRunDirectories() {
  const entries = await readdir(TEST_DATA_DIR).catch(() => []);
  for (const entry of entries) {
    const match = /^(?:pg|esdb-server)-(\d+)$/.exec(entry);
    if (match !== null && !processAlive(Number(match[1]))) await rm(join(TEST_DATA_DIR, entry), { recursive: true, force: true });
  }
}

function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set (only databases named ledger_test_* are
 * created and dropped there), else an embedded cluster on a free port, deleted afterwards. The
 * migrations run once into a template database that each test file clones.
 */
export default async function globalSetup() {
  const { compileTree } = await import('../../scripts/build.mjs');
  await removeStaleRunDirectories();
  // The integration-esdb project runs each EventStoreDB test server in a process of its own
  // (test/esdb-server/serve.ts, started by test/support/event-store.ts), from JavaScript compiled here.
  const esdbServerDir = join(TEST_DATA_DIR, `esdb-server-${process.pid}`);
  await compileTree(['test/esdb-server'], esdbServerDir);
  globalThis.__TEST_ESDB_SERVER_DIR__ = esdbServerDir;
  process.env.TEST_ESDB_SERVER_SCRIPT = join(esdbServerDir, 'test', 'esdb-server', 'serve.js');
  const { freePort, startEmbeddedPostgres } = await import('../../dist/src/database/embedded-postgres.js');
  const { runMigrations } = await import('../../dist/src/database/data-source.js');

  let adminUrl = process.env.DATABASE_URL;
  if (adminUrl === undefined || adminUrl === '') {
    const handle = await startEmbeddedPostgres({
      dataDir: join(TEST_DATA_DIR, `pg-${process.pid}`),
      port: await freePort(),
      database: 'postgres',
      ephemeral: true,
      durable: false,
    });
    globalThis.__TEST_POSTGRES__ = handle;
    adminUrl = handle.url;
    process.stderr.write('\n[test] PostgreSQL: an embedded cluster for this run (set DATABASE_URL to use a server)\n');
  } else {
    process.stderr.write('\n[test] PostgreSQL: the server at DATABASE_URL\n');
  }
  process.env.TEST_PG_ADMIN_URL = adminUrl;

  const admin = new pg.Client({ connectionString: withDatabase(adminUrl, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
    await admin.query(`create database ${TEMPLATE_DATABASE}`);
  } finally {
    await admin.end();
  }
  await runMigrations(withDatabase(adminUrl, TEMPLATE_DATABASE));
}
