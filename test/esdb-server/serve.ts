/**
 * One EventStoreDB test server in a process of its own, as the `integration-esdb` project's test
 * files use it (test/support/event-store.ts): a server inside the jest worker would share that
 * worker's event loop and heap with the test file, the app and the clients it serves, and slow
 * down with them. Prints `{"port": …}` as its first line on stdout once it listens; then serves its
 * control (control.ts) as JSON lines on stdin and stdout. Stops on SIGTERM, and when its stdin ends
 * (the jest worker that started it is gone).
 *
 * Settings at start, from the environment: ESDB_TEST_READ_LAG_MS, ESDB_TEST_ACKNOWLEDGE
 * (`indexed` | `written`), ESDB_TEST_WRITE_DELAY_MS.
 */
import { createInterface } from 'node:readline';
import { serveControlLine } from './control.js';
import { startEsdbTestServer } from './esdb-test-server.js';
import type { NodeSettings } from './node-behaviour.js';

function settingsFromEnv(): Partial<NodeSettings> {
  const settings: { -readonly [K in keyof NodeSettings]?: NodeSettings[K] } = {};
  const number = (name: string): number | undefined => {
    const raw = process.env[name];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
    return value;
  };
  settings.readLagMs = number('ESDB_TEST_READ_LAG_MS');
  settings.writeDelayMs = number('ESDB_TEST_WRITE_DELAY_MS');
  const acknowledge = process.env.ESDB_TEST_ACKNOWLEDGE;
  if (acknowledge === 'indexed' || acknowledge === 'written') settings.acknowledge = acknowledge;
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}

const server = await startEsdbTestServer({ settings: settingsFromEnv() });
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  void server.stop().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  void serveControlLine(server.control, line).then((answer) => process.stdout.write(`${answer}\n`));
});
lines.on('close', stop);
process.stdin.on('error', stop);
