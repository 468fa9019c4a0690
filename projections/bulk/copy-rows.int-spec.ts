import { describe, expect, it } from '@jest/globals';
import { useTestEventStore } from '../../test/support/event-store.js';
import { copyRows } from './copy-rows.js';

const db = useTestEventStore({ poolSize: 2 });

describe('When rows hold what COPY text must escape', () => {
  it('reads them back as written: backslashes, tabs, newlines, nulls, JSON, dates, numbers and booleans', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('create temp table copied (n int, t text, j jsonb, d timestamptz, b bigint, f boolean)');
      const rows = [
        [1, 'a\\b\tc\nd\re \\N', { quote: '"', slash: '\\', tab: '\t', text: 'ẹ́ ñ' }, new Date('2026-11-01T10:00:00.123Z'), 9_007_199_254_740_993n, true],
        [2, null, null, null, null, false],
        [3, '', '[]', new Date('1999-12-31T23:59:59.999Z'), -5, null],
      ] as const;
      expect(await copyRows(client, 'copied', ['n', 't', 'j', 'd', 'b', 'f'], rows)).toBe(3);
      const { rows: read } = await client.query('select n, t, j, d, b, f from copied order by n');
      expect(read).toEqual([
        { n: 1, t: 'a\\b\tc\nd\re \\N', j: { quote: '"', slash: '\\', tab: '\t', text: 'ẹ́ ñ' }, d: new Date('2026-11-01T10:00:00.123Z'), b: '9007199254740993', f: true },
        { n: 2, t: null, j: null, d: null, b: null, f: false },
        { n: 3, t: '', j: [], d: new Date('1999-12-31T23:59:59.999Z'), b: '-5', f: null },
      ]);
    } finally {
      client.release();
    }
  });
});
