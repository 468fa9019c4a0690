import { describe, expect, it } from '@jest/globals';
import { assertServesHttp, ConfigError, loadConfig, MAX_FUNDING_KOBO } from './config.js';

describe('loadConfig', () => {
  it('works with no variables at all (embedded default)', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.database.url).toBeUndefined();
    expect(config.eventStore.kind).toBe('postgres');
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ EVENT_STORE: 'mongo' }, 'EVENT_STORE'],
    [{ EVENT_STORE: 'esdb' }, 'EVENTSTORE_CONNECTION_STRING'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DB_POOL_SIZE: '0' }, 'DB_POOL_SIZE'],
    [{ DATABASE_URL: 'postgres://db.example.com/ledger' }, 'DATA_ENCRYPTION_KEY'],
    [{ DATA_ENCRYPTION_KEY: 'short' }, 'DATA_ENCRYPTION_KEY'],
  ])('rejects %j naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });

  it('takes the master key beside an external database, and leaves it to be generated on the embedded default', () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    expect(loadConfig({ DATABASE_URL: 'postgres://db.example.com/ledger', DATA_ENCRYPTION_KEY: key }).dataProtection.masterKey).toBe(key);
    expect(loadConfig({}).dataProtection.masterKey).toBeUndefined();
  });

  it('never echoes a bad URL, which may hold a password', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres//user:s3cret@host' })).toThrow(/^(?!.*s3cret).*$/s);
  });

  it('selects EventStoreDB with a connection string', () => {
    const config = loadConfig({ EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: 'esdb://127.0.0.1:2113?tls=false' });
    expect(config.eventStore).toEqual({ kind: 'esdb', esdbConnectionString: 'esdb://127.0.0.1:2113?tls=false' });
  });
});

describe('loadConfig: verification settings', () => {
  it('defaults to all ten scopes active and the default prices', () => {
    const config = loadConfig({});
    expect(config.verifications.defaultActiveScopes).toHaveLength(10);
    expect(config.verifications.pricesKobo.nin).toBe(10_000);
  });

  it('reads price overrides and rejects unknown scopes', () => {
    expect(loadConfig({ SCOPE_PRICES: 'nin=5000, bvn=7500' }).verifications.pricesKobo).toMatchObject({ nin: 5000, bvn: 7500 });
    expect(() => loadConfig({ SCOPE_PRICES: 'nim=5000' })).toThrow('SCOPE_PRICES');
    expect(() => loadConfig({ SCOPE_PRICES: 'nin=-1' })).toThrow('SCOPE_PRICES');
    expect(() => loadConfig({ DEFAULT_ACTIVE_SCOPES: 'nin,foo' })).toThrow('DEFAULT_ACTIVE_SCOPES');
  });

  it('refuses a sandbox credit the wallet could never fund, naming SANDBOX_CREDIT_KOBO', () => {
    expect(loadConfig({ SANDBOX_CREDIT_KOBO: String(MAX_FUNDING_KOBO) }).verifications.sandboxCreditKobo).toBe(MAX_FUNDING_KOBO);
    expect(() => loadConfig({ SANDBOX_CREDIT_KOBO: String(MAX_FUNDING_KOBO + 1) })).toThrow('SANDBOX_CREDIT_KOBO');
  });

  it('refuses a recovery deadline that a check still waiting on its provider could outlive', () => {
    expect(loadConfig({ PROVIDER_TIMEOUT_MS: '10000', RECOVERY_DEADLINE_MS: '20000' }).verifications.recoveryDeadlineMs).toBe(20_000);
    expect(() => loadConfig({ PROVIDER_TIMEOUT_MS: '10000', RECOVERY_DEADLINE_MS: '5000' })).toThrow('RECOVERY_DEADLINE_MS');
    expect(() => loadConfig({ PROVIDER_TIMEOUT_MS: '10000', RECOVERY_DEADLINE_MS: '19999' })).toThrow(/RECOVERY_DEADLINE_MS must be at least 20000/);
  });

  it('rejects short secrets', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'short' })).toThrow('ADMIN_TOKEN');
  });
});

describe('loadConfig: upstream providers', () => {
  it('defaults to the public base URLs, half the check deadline per upstream attempt, and one retry', () => {
    const config = loadConfig({ PROVIDER_TIMEOUT_MS: '8000' });
    expect(config.providers).toMatchObject({
      credentialsKey: undefined,
      dojahBaseUrl: 'https://api.dojah.io',
      premblyBaseUrl: 'https://api.prembly.com',
      timeoutMs: { dojah: 4_000, prembly: 4_000 },
      breakerFailures: 5,
      retryAttempts: 1,
    });
  });

  it('reads base URLs, timeouts and the breaker settings', () => {
    const config = loadConfig({
      DOJAH_BASE_URL: 'http://127.0.0.1:9999',
      DOJAH_TIMEOUT_MS: '700',
      PREMBLY_TIMEOUT_MS: '900',
      PROVIDER_BREAKER_FAILURES: '3',
      PROVIDER_BREAKER_HALF_OPEN_MS: '250',
      PROVIDER_RETRY_ATTEMPTS: '0',
    });
    expect(config.providers).toMatchObject({
      dojahBaseUrl: 'http://127.0.0.1:9999',
      timeoutMs: { dojah: 700, prembly: 900 },
      breakerFailures: 3,
      breakerHalfOpenMs: 250,
      retryAttempts: 0,
    });
  });

  it.each([
    [{ PROVIDER_CREDENTIALS_KEY: 'too-short' }, 'PROVIDER_CREDENTIALS_KEY'],
    [{ DOJAH_BASE_URL: 'ftp://dojah' }, 'DOJAH_BASE_URL'],
    [{ PREMBLY_BASE_URL: 'nope' }, 'PREMBLY_BASE_URL'],
    [{ PROVIDER_TIMEOUT_MS: '1000', DOJAH_TIMEOUT_MS: '5000' }, 'DOJAH_TIMEOUT_MS'],
    [{ PROVIDER_RETRY_ATTEMPTS: '10' }, 'PROVIDER_RETRY_ATTEMPTS'],
  ])('rejects %j naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(variable);
  });

  it('reads the sandbox latency as one duration or a range, 0 by default', () => {
    expect(loadConfig({}).providers.sandboxLatencyMs).toEqual({ min: 0, max: 0 });
    expect(loadConfig({ SANDBOX_LATENCY_MS: '250' }).providers.sandboxLatencyMs).toEqual({ min: 250, max: 250 });
    expect(loadConfig({ SANDBOX_LATENCY_MS: '200-1500' }).providers.sandboxLatencyMs).toEqual({ min: 200, max: 1_500 });
    for (const bad of ['1500-200', '-5', '70000', 'slow', '1-2-3']) expect(() => loadConfig({ SANDBOX_LATENCY_MS: bad })).toThrow('SANDBOX_LATENCY_MS');
  });

  it('accepts a 32-byte credentials key as hex or base64 and never echoes a bad one', () => {
    expect(loadConfig({ PROVIDER_CREDENTIALS_KEY: 'ab'.repeat(32) }).providers.credentialsKey).toBe('ab'.repeat(32));
    expect(loadConfig({ PROVIDER_CREDENTIALS_KEY: Buffer.alloc(32, 7).toString('base64') }).providers.credentialsKey).toBeDefined();
    expect(() => loadConfig({ PROVIDER_CREDENTIALS_KEY: 'secret-but-wrong' })).toThrow(/^(?!.*secret-but-wrong).*$/s);
  });
});

describe('loadConfig: operations', () => {
  it('needs PUBLIC_BASE_URL to serve HTTP in production, where the listening address is not what integrators reach', () => {
    expect(() => assertServesHttp(loadConfig({ NODE_ENV: 'production' }))).toThrow(/PUBLIC_BASE_URL is required when NODE_ENV=production/);
    expect(() => assertServesHttp(loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' }))).not.toThrow();
    expect(() => assertServesHttp(loadConfig({}))).not.toThrow();
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://api.example.com' })).toThrow(ConfigError);
  });

  it('needs a mail transport to serve HTTP on an external database, unless logging the mail is chosen explicitly', () => {
    const external = { DATABASE_URL: 'postgres://ledger:secret@db.example:5432/ledger', DATA_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64') };
    expect(() => assertServesHttp(loadConfig(external))).toThrow(/SMTP_URL is required outside the embedded default.*CONSOLE_MAIL_LOG_ONLY=true/);
    expect(() => assertServesHttp(loadConfig({ ...external, SMTP_URL: 'smtp://mail.example:587' }))).not.toThrow();
    expect(() => assertServesHttp(loadConfig({ ...external, CONSOLE_MAIL_LOG_ONLY: 'true' }))).not.toThrow();
    expect(() => assertServesHttp(loadConfig({}))).not.toThrow();
  });

  it('serves /docs and /metrics by default, and not in production unless asked to', () => {
    expect(loadConfig({}).operations).toMatchObject({ production: false, docsEnabled: true, metricsEnabled: true, corsOrigins: [], logRedactPaths: [] });
    expect(loadConfig({ NODE_ENV: 'production' }).operations).toMatchObject({ production: true, docsEnabled: false, metricsEnabled: false });
    expect(loadConfig({ NODE_ENV: 'production', METRICS_ENABLED: 'true', DOCS_ENABLED: 'on' }).operations).toMatchObject({ docsEnabled: true, metricsEnabled: true });
    expect(loadConfig({ DOCS_ENABLED: 'false' }).operations.docsEnabled).toBe(false);
    expect(() => loadConfig({ METRICS_ENABLED: 'maybe' })).toThrow('METRICS_ENABLED');
  });

  it('reads CORS origins and refuses anything that is not a bare origin', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173/' }).operations.corsOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
    for (const bad of ['*', 'app.example.com', 'https://app.example.com/path', 'ftp://files.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow('CORS_ORIGINS');
    }
  });

  it('reads extra redact paths and refuses malformed ones', () => {
    expect(loadConfig({ LOG_REDACT_PATHS: 'req.headers["x-partner-token"], user.*.secret' }).operations.logRedactPaths).toEqual([
      'req.headers["x-partner-token"]',
      'user.*.secret',
    ]);
    for (const bad of ['a..b', 'req.headers[x]', 'a b', '.a']) expect(() => loadConfig({ LOG_REDACT_PATHS: bad })).toThrow('LOG_REDACT_PATHS');
  });

  it('reads TRUST_PROXY as a hop count or addresses and CIDR ranges, and refuses trusting everyone', () => {
    expect(loadConfig({}).operations.trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).operations.trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.5, fd00::/8' }).operations.trustProxy).toEqual(['10.0.0.0/8', '192.168.1.5', 'fd00::/8']);
    for (const bad of ['true', '10.0.0.0/33', 'proxy.example.com', '10.0.0.0/8/1', '11']) expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow('TRUST_PROXY');
  });

  it('bounds the time a request may take to arrive, headers within the whole', () => {
    expect(loadConfig({}).operations).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000 });
    expect(loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '5000' }).operations).toMatchObject({ headersTimeoutMs: 2_000, requestTimeoutMs: 5_000 });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '5000' })).toThrow('HTTP_REQUEST_TIMEOUT_MS');
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow('HTTP_REQUEST_TIMEOUT_MS');
  });

  it('accepts LOG_LEVEL=silent and bounds SHUTDOWN_TIMEOUT_MS', () => {
    expect(loadConfig({ LOG_LEVEL: 'silent' }).logLevel).toBe('silent');
    expect(loadConfig({}).operations.shutdownTimeoutMs).toBe(25_000);
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '10' })).toThrow('SHUTDOWN_TIMEOUT_MS');
  });
});

describe('loadConfig: rate limits', () => {
  it('counts in memory, 600 requests per key per minute, when nothing is set', () => {
    expect(loadConfig({}).rateLimits).toEqual({ store: 'memory', perMinute: 600, redisUrl: undefined });
  });

  it('shares the counters through Redis when REDIS_URL is set, or through PostgreSQL when asked', () => {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).rateLimits.store).toBe('redis');
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', RATE_LIMIT_STORE: 'postgres' }).rateLimits.store).toBe('postgres');
    expect(loadConfig({ RATE_LIMIT_STORE: 'postgres', RATE_LIMIT_PER_MINUTE: '120' }).rateLimits).toMatchObject({ store: 'postgres', perMinute: 120 });
  });

  it('names the variable of a bad value', () => {
    expect(() => loadConfig({ RATE_LIMIT_STORE: 'redis' })).toThrow('REDIS_URL is required');
    expect(() => loadConfig({ RATE_LIMIT_STORE: 'memcached' })).toThrow('RATE_LIMIT_STORE');
    expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '0' })).toThrow('RATE_LIMIT_PER_MINUTE');
    expect(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379' })).toThrow('REDIS_URL');
  });
});
