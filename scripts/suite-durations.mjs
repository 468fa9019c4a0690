// Records each jest suite's duration for the test sequencer (test/support/slowest-first.mjs) in
// test/support/suite-durations.json: whole seconds, the longer of a suite's two projects' runs.
//   npm run test:durations                           runs every jest suite, then records
//   node scripts/suite-durations.mjs <report.json>   records from the JSON report of a run (jest --json)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

let [reportPath] = process.argv.slice(2);
let scratch;
if (reportPath === undefined) {
  scratch = mkdtempSync(join(tmpdir(), 'suite-durations-'));
  reportPath = join(scratch, 'report.json');
  const jest = ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', 'node_modules/jest/bin/jest.js', '--json', `--outputFile=${reportPath}`];
  const run = spawnSync(process.execPath, jest, { stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0) {
    process.stderr.write('suite-durations: the jest run failed; nothing recorded\n');
    rmSync(scratch, { recursive: true, force: true });
    process.exit(run.status ?? 1);
  }
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
const root = resolve('.');
const seconds = {};
for (const suite of report.testResults) {
  const duration = Math.round((suite.endTime - suite.startTime) / 1000);
  const path = relative(root, suite.name);
  if (duration > (seconds[path] ?? 0)) seconds[path] = duration;
}
const longestFirst = Object.fromEntries(Object.entries(seconds).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)));
writeFileSync('test/support/suite-durations.json', `${JSON.stringify({ seconds: longestFirst }, null, 2)}\n`);
process.stdout.write(`recorded ${Object.keys(longestFirst).length} suites in test/support/suite-durations.json\n`);
