import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { RebuildProgressBars } from './rebuild-progress.js';

/** A stream that keeps what is written to it, a terminal or not. */
function capture(isTTY: boolean): Writable & { text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  }) as Writable & { text: () => string; isTTY?: boolean; columns?: number; cursorTo?: unknown; moveCursor?: unknown; clearLine?: unknown; clearScreenDown?: unknown };
  if (isTTY) {
    Object.assign(stream, { isTTY: true, columns: 200, cursorTo: () => true, moveCursor: () => true, clearLine: () => true, clearScreenDown: () => true });
  }
  stream.text = () => chunks.join('');
  return stream;
}

describe.each([
  ['on a terminal', true],
  ['off a terminal', false],
])('Given rebuild progress bars %s', (_, isTTY) => {
  it('when two projections progress, then each bar carries its projection name', () => {
    const stream = capture(isTTY);
    const bars = new RebuildProgressBars(stream);
    bars.update({ projection: 'verifications', phase: 'replaying', eventsDone: 10, eventsTotal: 100 });
    bars.update({ projection: 'wallet-ledger', phase: 'replaying', eventsDone: 100, eventsTotal: 100 });
    bars.update({ projection: 'verifications', phase: 'swapping', eventsDone: 60, eventsTotal: 100 });
    bars.stop();
    const text = stream.text();
    expect(text).not.toContain('{name}');
    expect(text).toMatch(/verifications +\[[^\]]*\] 60% \| 60\/100 events/);
    expect(text).toMatch(/wallet-ledger +\[[^\]]*\] 100% \| 100\/100 events/);
  });
});
