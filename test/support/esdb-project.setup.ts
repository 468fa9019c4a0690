// Per test file of the `integration-esdb` jest project: the app, the CLIs and the projection
// workers under test run on EventStoreDB (one test server per test database, each in a process of
// its own, see event-store.ts). Jest gives each test file its own copy of process.env, so this
// never leaks into the `integration` (postgres) project's files that share a worker.
process.env.TEST_EVENT_STORE = 'esdb';
