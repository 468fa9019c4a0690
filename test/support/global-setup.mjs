// Jest runs global setup outside its module system, so this file is plain ESM and uses the
// swc-compiled sources (built here first, in well under a second).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
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
    const match = /^(?:pg|esdb-server|softhsm)-(\d+)$/.exec(entry);
    if (match !== null && !processAlive(Number(match[1]))) await rm(join(TEST_DATA_DIR, entry), { recursive: true, force: true });
  }
}

function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

const SOFTHSM_MODULES = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so', '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so'];

/**
 * A SoftHSM2 token for the PKCS#11 tests (test/support/softhsm.ts), in a directory of this run's:
 * SoftHSM2 reads SOFTHSM2_CONF and finds its tokens once per process, when first initialised, so
 * the token is made here, before any worker starts, and every test uses key labels of its own.
 */
async function softHsmToken() {
  const module = SOFTHSM_MODULES.find((path) => existsSync(path));
  if (module === undefined) return;
  const dir = join(TEST_DATA_DIR, `softhsm-${process.pid}`);
  await mkdir(join(dir, 'tokens'), { recursive: true });
  const conf = join(dir, 'softhsm2.conf');
  await writeFile(conf, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const pin = randomBytes(8).toString('hex');
  try {
    execFileSync('softhsm2-util', ['--init-token', '--free', '--label', 'ivl-test', '--pin', pin, '--so-pin', randomBytes(8).toString('hex')], {
      env: { ...process.env, SOFTHSM2_CONF: conf },
      stdio: 'ignore',
    });
  } catch {
    await rm(dir, { recursive: true, force: true });
    return;
  }
  globalThis.__TEST_SOFTHSM_DIR__ = dir;
  Object.assign(process.env, { SOFTHSM2_CONF: conf, TEST_SOFTHSM_MODULE: module, TEST_SOFTHSM_TOKEN_LABEL: 'ivl-test', TEST_SOFTHSM_PIN: pin });
}

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set (only databases named ledger_test_* are
 * created and dropped there), else an embedded cluster on a free port, deleted afterwards. The
 * migrations run once into a template database that each test file clones.
 */
export default async function globalSetup() {
  const { compileTree } = await import('../../scripts/build.mjs');
  await removeStaleRunDirectories();
  await softHsmToken();
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
