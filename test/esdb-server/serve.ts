/**
 * One EventStoreDB test server in a process of its own, as the `integration-esdb` project's test
 * files use it (test/support/event-store.ts): a server inside the jest worker would share that
 * worker's event loop and heap with the test file, the app and the clients it serves, and slow
 * down with them. Prints `{"port": …}` as its first line on stdout once it listens; stops on
 * SIGTERM, and when its stdin ends (the jest worker that started it is gone).
 */
import { startEsdbTestServer } from './esdb-test-server.js';

const server = await startEsdbTestServer();
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  void server.stop().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
