import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import pg from 'pg';
import { describeOnPostgresProjectOnly } from '../../test/support/store-independent.js';
import { freePort, startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres.js';

describeOnPostgresProjectOnly('the embedded cluster’s settings', 'the embedded cluster is the same on both event stores', () => {
  let cluster: EmbeddedPostgresHandle;
  const clusterDir = resolve('.data', 'test', `settings-${process.pid}-${randomBytes(4).toString('hex')}`);

  beforeAll(async () => {
    cluster = await startEmbeddedPostgres({ dataDir: clusterDir, port: await freePort(), database: 'postgres', ephemeral: true });
  });

  afterAll(async () => {
    await cluster?.stop();
    await rm(clusterDir, { recursive: true, force: true });
  });

  it('runs with backend_flush_after 256kB (embedded-postgres.ts says why)', async () => {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ backend_flush_after: string }>('show backend_flush_after');
      expect(rows[0].backend_flush_after).toBe('256kB');
    } finally {
      await client.end();
    }
  });
});
