import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { eventsSql, eventsSqlLeaks, kindLeaks, kindTests, readSources } from './store-port.js';

// The rules are written out at the top of store-port.ts.
describe('The event store behind its port, over src/ and projections/', () => {
  const files = readSources(resolve('.'), ['src', 'projections']);

  it('are read (a few hundred files, the adapters among them)', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(files.map((file) => file.path)).toContain('src/event-store/postgres-event-store.ts');
    // The scan finds what is there: the adapter's own SQL and the factory's kind test.
    const adapter = files.filter((file) => file.path.startsWith('src/event-store/'));
    expect(adapter.flatMap((file) => eventsSql(file.path, file.text)).length).toBeGreaterThan(5);
    expect(adapter.flatMap((file) => kindTests(file.path, file.text)).length).toBeGreaterThan(0);
  });

  it("test the store's kind only in src/event-store/ and the wiring", () => {
    expect(kindLeaks(files)).toEqual([]);
  });

  it('name the events table in SQL only in src/event-store/ and the migrations', () => {
    expect(eventsSqlLeaks(files)).toEqual([]);
  });
});

describe('The store-port scan', () => {
  const file = (path: string, text: string) => ({ path, text });

  it('finds each shape of a kind test, and passes capability checks and other kinds', () => {
    const text = [
      "if (store.kind !== 'postgres') return null;",
      "const hashed = config.eventStore.kind === 'postgres' && cores > 1;",
      "const x = 'esdb' === this.store.kind ? 1 : 2;",
      "const { kind } = options; if (kind == 'esdb') go();",
      'switch (store.kind) { case "esdb": break; default: break; }',
      'warn({ kind: config.eventStore.kind, pool });',
      // Not tests of the store's kind:
      "if (store.logReader !== undefined && store.multiStreamAppends === 'atomic') go();",
      "if (user.kind !== 'operator') refuse();",
      "switch (field.kind) { case 'text': break; }",
      'log({ eventStoreKind: store.kind, kind: holder.kind });',
      "// a comment: store.kind === 'postgres'",
    ].join('\n');
    const found = kindLeaks([file('src/x/y.ts', text)]);
    expect(found.map((line) => line.split(':')[1])).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('finds SQL naming the events table in string and template literals, not in comments or prose', () => {
    const text = [
      "await pool.query('select max(position) as max from events');",
      'const sql = `select 1 from events where position > ${from}`;',
      'const sql2 = `insert into events (position) select 1`;',
      'const sql3 = `update events e set data = $1`;',
      'const sql4 = `select * from t where position < events_visible_bound()`;',
      'const sql5 = `select * from ${table} join events e on true`;',
      // Not SQL on the log:
      '// read from events of the log',
      "const message = 'Raw image bytes never go into events_log or responses';",
      "const other = 'select * from event_streams';",
      "const feature = 'select * from webhook_events where id = $1';",
    ].join('\n');
    const found = eventsSqlLeaks([file('projections/z/z.ts', text)]);
    expect(found.map((line) => line.split(':')[1])).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('lets the adapters, the wiring and the migrations through, and nothing else', () => {
    const kindTest = "if (config.eventStore.kind === 'esdb') open();";
    const sql = "const sql = 'select 1 from events';";
    expect(kindLeaks([file('src/event-store/create-event-store.ts', kindTest), file('src/core.module.ts', kindTest), file('src/config/config.ts', kindTest)])).toEqual([]);
    expect(kindLeaks([file('src/config/other.ts', kindTest), file('src/audit/audit-cli.ts', kindTest)])).toHaveLength(2);
    expect(eventsSqlLeaks([file('src/event-store/postgres-log-pages.ts', sql), file('src/database/migrations/1-x.ts', sql)])).toEqual([]);
    expect(eventsSqlLeaks([file('src/database/pool.ts', sql), file('src/main.ts', sql)])).toHaveLength(2);
  });
});
