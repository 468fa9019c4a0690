import { resolve } from 'node:path';

export type EventStoreKind = 'postgres' | 'esdb';

/** The one typed configuration object. Built once at start by `loadConfig`, never read from `process.env` elsewhere. */
export interface AppConfig {
  readonly serviceName: string;
  readonly host: string;
  readonly port: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /** Where the embedded default keeps its files (PostgreSQL data, generated admin token, portraits). */
  readonly dataDir: string;
  readonly database: {
    /** External PostgreSQL; when absent the embedded PostgreSQL under `dataDir` is used. */
    readonly url: string | undefined;
    readonly embeddedPort: number;
    readonly poolSize: number;
  };
  readonly eventStore: {
    readonly kind: EventStoreKind;
    readonly esdbConnectionString: string | undefined;
  };
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // The value may hold a password: never echo it.
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

/** Reads and validates the environment once. Throws a ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): AppConfig {
  const kind = oneOf(env, 'EVENT_STORE', ['postgres', 'esdb'] as const, 'postgres');
  const esdbConnectionString = url(env, 'EVENTSTORE_CONNECTION_STRING', ['esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrentdb+discover:']);
  if (kind === 'esdb' && esdbConnectionString === undefined) {
    throw new ConfigError('EVENTSTORE_CONNECTION_STRING', 'is required when EVENT_STORE=esdb');
  }
  return {
    serviceName: text(env, 'SERVICE_NAME') ?? 'identity-verification-service',
    host: text(env, 'HOST') ?? '0.0.0.0',
    port: integer(env, 'PORT', 3000, 0, 65_535),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const, 'info'),
    dataDir: resolve(text(env, 'DATA_DIR') ?? '.data'),
    database: {
      url: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
      embeddedPort: integer(env, 'EMBEDDED_PG_PORT', 54_329, 1, 65_535),
      poolSize: integer(env, 'DB_POOL_SIZE', 20, 1, 500),
    },
    eventStore: { kind, esdbConnectionString },
  };
}
