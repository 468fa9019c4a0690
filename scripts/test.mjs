// `npm test`: every jest suite, and beside it the type check and lint, then the browser tests.
//
// Each of the three spends most of its time waiting (jest on PostgreSQL, the event store and child
// processes, the browser tests on the service and the pages), so on a 2-core machine running them
// together takes little longer than jest alone, where running them one after the other added the
// type check's and the browser tests' minutes to it. Jest's output streams as it runs; the type
// check's and the browser tests' are held and printed after it, each under its own heading, so the
// three never interleave. The exit code is 1 when any of them failed.
//
// `npm test -- --one-at-a-time` runs them in turn instead (the type check, then jest, then the
// browser tests, each stopping the rest when it fails), streaming all output: for a machine too
// small to run them together.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const node = process.execPath;
const JEST = [node, ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', 'node_modules/jest/bin/jest.js']];
// `npm run typecheck`, through the npm that runs this script when there is one.
const NPM = process.env.npm_execpath === undefined ? ['npm', []] : [node, [process.env.npm_execpath]];
const TYPECHECK = [[NPM[0], [...NPM[1], 'run', '--silent', 'typecheck']]];
// ESLint (typescript-eslint's type-aware rules) after the type check, in the same turn: both read the whole program.
const LINT = [NPM[0], [...NPM[1], 'run', '--silent', 'lint']];
const BROWSER = [node, ['scripts/browser-tests.mjs']];
const BUILD = [node, ['scripts/build.mjs']];

/** Runs a command; its output goes to ours (`held` false) or is kept and answered. */
function run([command, args], { held }) {
  return new Promise((resolveRun, rejectRun) => {
    const child = spawn(command, args, { stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const output = [];
    if (held) {
      child.stdout.on('data', (chunk) => output.push(chunk));
      child.stderr.on('data', (chunk) => output.push(chunk));
    }
    child.once('error', rejectRun);
    child.once('close', (code, signal) => resolveRun({ ok: code === 0, code: code ?? signal, output: Buffer.concat(output).toString() }));
  });
}

/** Runs the commands in turn, stopping at the first failure. */
async function inTurn(commands, options) {
  let output = '';
  for (const command of commands) {
    const result = await run(command, options);
    output += result.output;
    if (!result.ok) return { ...result, output };
  }
  return { ok: true, code: 0, output };
}

async function timed(name, work) {
  const started = performance.now();
  const result = await work;
  return { name, seconds: Math.round((performance.now() - started) / 1000), ...result };
}

function summary(results) {
  process.stdout.write('\n');
  for (const { name, ok, code, seconds } of results) process.stdout.write(`npm test: ${name} ${ok ? 'passed' : `FAILED (exit ${code})`} in ${seconds} s\n`);
  process.exit(results.every((result) => result.ok) ? 0 : 1);
}

const oneAtATime = process.argv.includes('--one-at-a-time');
if (oneAtATime) {
  const results = [];
  for (const [name, commands] of [
    ['the type check and lint', [...TYPECHECK, LINT]],
    ['jest', [JEST]],
    ['the browser tests', [BROWSER]],
  ]) {
    const result = await timed(name, inTurn(commands, { held: false }));
    results.push(result);
    if (!result.ok) break;
  }
  summary(results);
}

// Built once before the three start: jest's set-up and the browser tests' would otherwise both build.
const built = await run(BUILD, { held: false });
if (!built.ok) {
  process.stderr.write('npm test: the build failed\n');
  process.exit(1);
}
process.stdout.write("npm test: the type check, lint and the browser tests run beside jest; their output follows jest's.\n");
const typecheck = timed('the type check and lint', inTurn([...TYPECHECK, LINT], { held: true }));
// One Playwright worker beside jest, where alone they take two, and only once the type check and
// lint are over: three at once beside jest's two workers left the machine's first minutes so
// loaded that a read waiting for its own writes met its 2 s bound (503) in read-your-writes. In
// turn they still end before jest does.
const browser = typecheck.then(() => timed('the browser tests', run([BROWSER[0], [...BROWSER[1], '--workers=1']], { held: true })));
const jest = await timed('jest', run(JEST, { held: false }));
const results = [jest];
for (const [heading, pending] of [
  ['the type check and lint', typecheck],
  ['the browser tests', browser],
]) {
  const result = await pending;
  process.stdout.write(`\n==== ${heading} ====\n${result.output || '(no output)\n'}`);
  results.push(result);
}
summary(results);
