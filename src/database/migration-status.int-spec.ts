import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { describeOnPostgresProjectOnly } from '../../test/support/store-independent.js';
import { runMigrations } from './data-source.js';
import { migrationsApplied } from './migration-status.js';

describeOnPostgresProjectOnly('whether every migration is applied', 'the migrations table is the same on both event stores', () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
  });

  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  it('says yes on a migrated database, no when one migration is missing or nothing has migrated, and yes again once migrated', async () => {
    expect(await migrationsApplied(pool)).toBe(true);

    const [newest] = (await pool.query<{ name: string }>('select name from schema_migrations order by timestamp desc limit 1')).rows;
    await pool.query('delete from schema_migrations where name = $1', [newest.name]);
    expect(await migrationsApplied(pool)).toBe(false);
    await pool.query('insert into schema_migrations (timestamp, name) values ($1, $2)', [Number(newest.name.replace(/^\D+/, '')), newest.name]);
    expect(await migrationsApplied(pool)).toBe(true);

    await pool.query('alter table schema_migrations rename to schema_migrations_aside');
    expect(await migrationsApplied(pool)).toBe(false);
    await pool.query('alter table schema_migrations_aside rename to schema_migrations');
    expect(await migrationsApplied(pool)).toBe(true);
  });

  it('gives the same answer runMigrations acts on: nothing pending after it runs', async () => {
    expect(await runMigrations(database.url)).toEqual([]);
    expect(await migrationsApplied(pool)).toBe(true);
  });
});
