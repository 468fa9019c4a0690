import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { createApp } from '../../src/app.factory.js';
import { createLogger } from '../../src/logging/logger.js';
import { loadConfig } from '../../src/config/config.js';
import type { Runtime } from '../../src/config/runtime.js';
import { EVENT_STORE, type EventStore } from '../../src/event-store/event-store.port.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { testEventStoreEnv, testEventStoreKind, type TestEventStoreKind } from './event-store.js';
import { TEST_DATA_ENCRYPTION_KEY } from './data-protection.js';
import { openApiValidator, type OpenApiValidator } from './openapi-validator.js';

export interface TestApp {
  readonly app: NestFastifyApplication;
  readonly baseUrl: string;
  readonly adminToken: string;
  readonly database: TestDatabase;
  readonly runtime: Runtime;
  /** The event store the app runs on (this jest project's: postgres or esdb), for assertions on what was written. */
  readonly eventStore: EventStore;
  readonly eventStoreKind: TestEventStoreKind;
  /** JSON request helper against the running server. */
  request(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string>; rawBody?: string }): Promise<TestResponse>;
  /** Same, with the admin bearer token. */
  admin(method: string, path: string, body?: unknown): Promise<TestResponse>;
  /** The validator every answer of `request` and `admin` went through (undefined with `validateResponses: false`). */
  readonly openApi: OpenApiValidator | undefined;
  close(): Promise<void>;
}

export interface TestResponse {
  readonly status: number;
  readonly headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any;
}

export interface StartTestAppOptions {
  /** Extra environment variables, as an operator would set them. */
  readonly env?: Record<string, string>;
  /** Reuse a database (a second instance on the same stores, event store included). */
  readonly database?: TestDatabase;
  readonly embedded?: boolean;
  /** Where the app's log lines go (with LOG_LEVEL in `env`); by default nowhere (LOG_LEVEL=silent). */
  readonly logDestination?: DestinationStream;
  /**
   * Check every answer of `request` and `admin` against the OpenAPI document (openapi-validator.ts):
   * a status the operation does not document, or a body that does not match its schema, throws.
   * `documented` (the default) checks the answers of the document's operations and lets a request
   * to a path the document lacks through; `strict` also throws on those; `false` checks nothing
   * (for a suite that breaks the service on purpose).
   */
  readonly validateResponses?: 'strict' | 'documented' | false;
}

/**
 * The real application on a real HTTP port, on its own fresh database (or a shared one for a
 * second instance). No mocks: real PostgreSQL, real event store, real Fastify.
 */
export async function startTestApp(options: StartTestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const ownsDatabase = options.database === undefined;
  const dataDir = await mkdtemp(join(tmpdir(), 'ledger-test-'));
  const adminToken = `admin_${randomBytes(24).toString('base64url')}`;
  const config = loadConfig({
    ...(await testEventStoreEnv(database)),
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
    ADMIN_TOKEN: adminToken,
    PROVIDER_TIMEOUT_MS: '300',
    RUN_PROJECTIONS: 'true',
    LOG_LEVEL: 'silent',
    // No mail server in the tests but the SMTP one some start themselves.
    CONSOLE_MAIL_LOG_ONLY: 'true',
    ...options.env,
  });
  const runtime: Runtime = { config, databaseUrl: database.url, embedded: options.embedded ?? false, adminToken: config.admin.token };
  const app = await createApp(runtime, { logger: createLogger(config, options.logDestination) });
  const eventStore = app.get<symbol, EventStore>(EVENT_STORE);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const baseUrl = `http://127.0.0.1:${port}`;

  const validation = options.validateResponses ?? 'documented';
  const validator = validation === false ? undefined : openApiValidator();
  const request: TestApp['request'] = async (method, path, requestOptions = {}) => {
    const headers: Record<string, string> = { ...requestOptions.headers };
    let body: string | undefined = requestOptions.rawBody;
    if (requestOptions.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(requestOptions.body);
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    if (validator !== undefined) {
      const problems = validator.check(
        { method, url: path, status: response.status, contentType: response.headers.get('content-type'), text, headers: [...response.headers.keys()] },
        { unknownOperation: validation === 'strict' ? 'problem' : 'ignore' },
      );
      if (problems.length > 0) throw new Error(`The answer does not match the OpenAPI document:\n${problems.join('\n')}`);
    }
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Leave non-JSON bodies as text for the assertion to show.
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };

  return {
    app,
    baseUrl,
    adminToken,
    database,
    runtime,
    eventStore,
    eventStoreKind: testEventStoreKind(),
    request,
    admin: (method, path, body) => request(method, path, { body, headers: { authorization: `Bearer ${adminToken}` } }),
    openApi: validator,
    close: async () => {
      await app.close();
      if (ownsDatabase) await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
