import type pg from 'pg';
import { MIGRATIONS } from './migrations/index.js';

/**
 * Whether every migration of this build is recorded as applied, asked with one query. A command
 * that only reads (the wallet audit) then starts without loading TypeORM (about half a second of
 * CPU) to find nothing to do; when this says false it runs `runMigrations` as before. (Such a
 * command also skips the position epoch that `runMigrations` places: only appends need it.)
 */
export async function migrationsApplied(pool: pg.Pool): Promise<boolean> {
  let rows: Array<{ name: string }>;
  try {
    rows = (await pool.query<{ name: string }>('select name from schema_migrations')).rows;
  } catch (error) {
    // undefined_table: a database nothing has migrated yet.
    if ((error as { code?: string }).code === '42P01') return false;
    throw error;
  }
  const applied = new Set(rows.map((row) => row.name));
  // TypeORM records a migration under its `name`.
  return MIGRATIONS.every((migration) => applied.has(new migration().name));
}
