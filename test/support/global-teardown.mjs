import { rm } from 'node:fs/promises';

export default async function globalTeardown() {
  await globalThis.__TEST_POSTGRES__?.stop();
  if (globalThis.__TEST_SOFTHSM_DIR__ !== undefined) await rm(globalThis.__TEST_SOFTHSM_DIR__, { recursive: true, force: true });
  if (globalThis.__TEST_ESDB_SERVER_DIR__ !== undefined) await rm(globalThis.__TEST_ESDB_SERVER_DIR__, { recursive: true, force: true });
}
