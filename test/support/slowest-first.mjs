// Jest's test sequencer, ordering the suites longest first from the start of a clean run.
//
// Jest's own sequencer orders by the durations it cached from earlier runs on the machine, and
// by file size when it has none: on a fresh clone (CI, a new machine) a short file that runs long,
// such as the chaos suite, could start last and run alone for a minute while the other worker
// idled. Here a suite without a cached duration takes the one recorded in suite-durations.json
// (the longer of its two projects' runs; `npm run test:durations` records them again), and a
// suite in neither is taken as short. The cached figure wins when there is one: it is this
// machine's. Suites that failed last time still go first, as with Jest's own sequencer.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

/** Seconds by path from the repository's root. */
const recorded = JSON.parse(readFileSync(new URL('./suite-durations.json', import.meta.url), 'utf8')).seconds;
/** Milliseconds, as Jest caches them, for a suite that is in neither record. */
const UNKNOWN_SUITE_MS = 1_000;

export default class SlowestFirst extends Sequencer {
  sort(tests) {
    const estimate = (test) => {
      const cached = this.time(test);
      if (cached !== undefined) return cached;
      const seconds = recorded[relative(test.context.config.rootDir, test.path)];
      return seconds === undefined ? UNKNOWN_SUITE_MS : seconds * 1000;
    };
    const estimates = new Map(tests.map((test) => [test, estimate(test)]));
    const failed = new Set(tests.filter((test) => this.hasFailed(test)));
    return [...tests].sort((a, b) => Number(failed.has(b)) - Number(failed.has(a)) || estimates.get(b) - estimates.get(a));
  }
}
