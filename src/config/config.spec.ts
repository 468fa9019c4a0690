import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './config.js';

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
  ])('rejects %j naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
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

  it('rejects short secrets', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'short' })).toThrow('ADMIN_TOKEN');
  });
});
