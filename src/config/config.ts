import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { isScope, MAX_PRICE_KOBO, scopeDefinition, SCOPES, type Scope } from '../scopes/scopes.js';

/** Default price per check in kobo (₦1 = 100 kobo), from each scope's definition; overridable by SCOPE_PRICES and per organization. */
export function defaultScopePricesKobo(): Record<Scope, number> {
  return Object.fromEntries(SCOPES.map((scope) => [scope, scopeDefinition(scope).defaultPriceKobo])) as Record<Scope, number>;
}

export type EventStoreKind = 'postgres' | 'esdb';
/** Where the per-key request counters live: one process, or shared by every instance. */
export type RateLimitStore = 'memory' | 'postgres' | 'redis';
export const RATE_LIMIT_STORES: readonly RateLimitStore[] = ['memory', 'postgres', 'redis'];
/** Bounds of a per-key limit, for RATE_LIMIT_PER_MINUTE and for the operators' per-organization override. */
export const MAX_REQUESTS_PER_MINUTE = 1_000_000;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The one typed configuration object. Built once at start by `loadConfig`, never read from `process.env` elsewhere. */
/** One funding credits at most this much (100 million naira): the wallet's rule, and the bound of a configured credit. */
export const MAX_FUNDING_KOBO = 10_000_000_000;

export interface AppConfig {
  readonly serviceName: string;
  readonly host: string;
  readonly port: number;
  readonly logLevel: LogLevel;
  /** Where the embedded default keeps its files (PostgreSQL data, generated admin token, portraits). */
  readonly dataDir: string;
  readonly database: {
    /** External PostgreSQL; when absent the embedded PostgreSQL under `dataDir` is used. */
    readonly url: string | undefined;
    /** EMBEDDED_PG_PORT; unset, the embedded cluster takes 54329 or, when that is taken, a free port. */
    readonly embeddedPort: number | undefined;
    readonly poolSize: number;
  };
  readonly eventStore: {
    readonly kind: EventStoreKind;
    readonly esdbConnectionString: string | undefined;
  };
  readonly admin: {
    /** Full access to /admin/v1. Absent: the admin API answers 404, except on the embedded default, which generates one under dataDir. */
    readonly token: string | undefined;
    /** Read-only access to /admin/v1 (403 on every write). */
    readonly auditorToken: string | undefined;
    /**
     * How long an operator's change made over HTTP (admin API, console) waits for the organizations
     * and api-keys read models before answering 503 change_not_in_force (a new key is answered anyway).
     */
    readonly changeWaitMs: number;
  };
  readonly verifications: {
    readonly defaultActiveScopes: readonly Scope[];
    readonly pricesKobo: Readonly<Record<Scope, number>>;
    /** Credited to every new organization's test wallet. */
    readonly sandboxCreditKobo: number;
    readonly providerTimeoutMs: number;
    /** A verification still open after this long is failed by the recovery process and its reservation released. */
    readonly recoveryDeadlineMs: number;
    readonly recoveryIntervalMs: number;
    /** Personal data of a check is erased this many days after it ran, unless its organization sets its own period. */
    readonly retentionDays: number;
    readonly retentionSweepIntervalMs: number;
  };
  readonly portraits: {
    /** 32-byte key (hex or base64) for AES-256-GCM at rest. Absent: generated once under dataDir. */
    readonly encryptionKey: string | undefined;
    readonly directory: string;
    readonly urlTtlSeconds: number;
    /**
     * Base of the signed portrait links (PUBLIC_BASE_URL). Absent: the address the API listens on.
     * Never the request's Host header. Required in production (assertServesHttp).
     */
    readonly publicBaseUrl: string | undefined;
  };
  readonly dataProtection: {
    /** DATA_ENCRYPTION_KEY: the master key (32 bytes, base64) that wraps every organization's keys. Absent on the embedded default only: generated under dataDir. */
    readonly masterKey: string | undefined;
    /**
     * REQUEST_ID_HASH_KEY (32 bytes): when set, a caller's X-Request-Id is kept with the events its
     * request wrote as HMAC-SHA-256 under this key, so whoever holds the key can find them by the
     * caller's id; never the id itself. Unset, nothing of the caller's id is kept.
     */
    readonly requestIdHashKey: string | undefined;
    /** KEY_MANAGEMENT=pkcs11: the master key in a PKCS#11 token (KMS_PKCS11_*), not DATA_ENCRYPTION_KEY. */
    readonly pkcs11: Pkcs11Config | undefined;
    /** ORGANIZATION_KEY_MAX_WRAPS: keys wrapped under one version of an organization's key before a new version (default 2^32 - 2^26). */
    readonly organizationKeyMaxWraps: number;
  };
  /** Run the projection workers inside the API process: `auto` does so on the embedded default only. */
  readonly runProjections: 'auto' | 'true' | 'false';
  /** HTTP upstreams (Dojah, Prembly) behind live keys. */
  readonly providers: {
    /** 32-byte key (hex or base64) that encrypts upstream credentials in events (AES-256-GCM). Absent: generated once under dataDir. */
    readonly credentialsKey: string | undefined;
    readonly dojahBaseUrl: string;
    readonly premblyBaseUrl: string;
    /** Per attempt, per upstream; by default half the check's deadline, so a secondary upstream still fits in it. */
    readonly timeoutMs: { readonly dojah: number; readonly prembly: number };
    readonly breakerFailures: number;
    readonly breakerHalfOpenMs: number;
    /** Extra attempts, only after a failure where the upstream answered nothing (connection refused or reset). */
    readonly retryAttempts: number;
    /** How long the sandbox takes to answer, drawn evenly between min and max per check (both 0: at once). */
    readonly sandboxLatencyMs: { readonly min: number; readonly max: number };
  };
  /** Logs, metrics, headers and shutdown: what operations and security reviews set. */
  readonly operations: {
    /** NODE_ENV=production: /docs and /metrics default to off. */
    readonly production: boolean;
    /** Extra pino redact paths (LOG_REDACT_PATHS), on top of the built-in ones. */
    readonly logRedactPaths: readonly string[];
    readonly docsEnabled: boolean;
    readonly metricsEnabled: boolean;
    /**
     * TRUST_PROXY: the reverse proxies in front, whose X-Forwarded-For and X-Forwarded-Proto are
     * believed (the client's address for the per-address throttles and the log, the scheme for
     * Secure cookies): a hop count, or the proxies' addresses and CIDR ranges. False: no proxy, the
     * headers are the caller's to write and ignored.
     */
    readonly trustProxy: false | number | readonly string[];
    /** Origins allowed to call the API from a browser; empty: no CORS headers at all. */
    readonly corsOrigins: readonly string[];
    /**
     * HTTP_HEADERS_TIMEOUT_MS: a connection's request line and headers must arrive within this
     * (the time to a request's first byte is bounded by it too); else 408 and the connection closes.
     * A kept-alive connection idle this long after an answer is closed (its keepAliveTimeout).
     */
    readonly headersTimeoutMs: number;
    /** HTTP_REQUEST_TIMEOUT_MS: the whole request, body included, must arrive within this; else 408. Not the time to answer. */
    readonly requestTimeoutMs: number;
    /** Upper bound on a graceful stop (in-flight checks, HTTP drain, stores closed) before the process exits anyway. */
    readonly shutdownTimeoutMs: number;
  };
  /** The console at /console: integrators' and operators' accounts, sessions and mail. */
  readonly console: {
    /** A session unused this long ends (CONSOLE_SESSION_IDLE_MINUTES). */
    readonly sessionIdleMs: number;
    /** A session ends this long after sign-in, however used (CONSOLE_SESSION_MAX_HOURS). */
    readonly sessionMaxMs: number;
    /** Secure cookies even when the request did not arrive over HTTPS (CONSOLE_SECURE_COOKIES; a TLS proxy in front). */
    readonly secureCookies: boolean;
    /**
     * SMTP_URL: mail goes out through nodemailer. Absent, mail is not sent: the embedded default shows
     * it in the development mailbox; elsewhere the service refuses to start unless mailLogOnly.
     */
    readonly smtpUrl: string | undefined;
    /** CONSOLE_MAIL_LOG_ONLY: an operator's explicit choice to run with no mail transport; the log says only that a mail was queued. */
    readonly mailLogOnly: boolean;
    /** MAIL_FROM: the sender of the console's mail. */
    readonly mailFrom: string;
    /** Sign-ups and other mail-sending requests one address may make per hour (CONSOLE_MAIL_REQUESTS_PER_HOUR). */
    readonly mailRequestsPerHour: number;
    /** Mails one recipient, and one account, may be sent per hour (CONSOLE_MAILS_PER_RECIPIENT_PER_HOUR). */
    readonly mailsPerRecipientPerHour: number;
    /** Passkeys' relying party: the origin of PUBLIC_BASE_URL and its host name, else http://localhost:PORT and localhost. */
    readonly webauthn: { readonly origin: string; readonly rpId: string };
  };
  /** Webhook deliveries to integrators' endpoints. */
  readonly webhooks: {
    /**
     * WEBHOOK_ALLOW_PRIVATE_TARGETS: endpoints may resolve to loopback, private and link-local
     * addresses and use plain http (local receivers in development and tests). Always so on the
     * embedded default.
     */
    readonly allowPrivateTargets: boolean;
    /** WEBHOOK_TIMEOUT_MS: one attempt's limit, connection to last byte. */
    readonly timeoutMs: number;
    /** WEBHOOK_CONCURRENCY_PER_ENDPOINT: attempts in flight at once to one endpoint, all instances together. */
    readonly concurrencyPerEndpoint: number;
    /** WEBHOOK_SEND: this instance sends due deliveries (row locks let every instance do so side by side). */
    readonly send: boolean;
  };
  /** Wallet top-ups paid from outside: Paystack on live wallets, the sandbox rail on test wallets (and live ones on the embedded default). */
  readonly payments: {
    /** PAYSTACK_SECRET_KEY: the service's own Paystack secret key (API calls and the webhook signature). Absent: live top-ups are off, except on the embedded default (sandbox rail). */
    readonly paystackSecretKey: string | undefined;
    readonly paystackBaseUrl: string;
    /** Per attempt (PAYSTACK_TIMEOUT_MS). */
    readonly paystackTimeoutMs: number;
    /** PAYSTACK_PREFERRED_BANK: the bank slug asked for dedicated virtual accounts. */
    readonly paystackPreferredBank: string;
    /** Bounds of one top-up (TOPUP_MIN_KOBO, TOPUP_MAX_KOBO). */
    readonly minTopUpKobo: number;
    readonly maxTopUpKobo: number;
    /** TOPUP_DAILY_LIMIT_KOBO: top-ups one organization may start per environment and Lagos day. */
    readonly dailyLimitKobo: number;
    /** How often unfinished top-ups are verified again (TOPUP_RECOVERY_INTERVAL_MS). */
    readonly recoveryIntervalMs: number;
  };
  readonly rateLimits: {
    readonly store: RateLimitStore;
    /** Requests per API key per minute on /v1, unless an operator set another limit for the organization. */
    readonly perMinute: number;
    /** Required with the `redis` store. */
    readonly redisUrl: string | undefined;
  };
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

/** Where the master key lives in a PKCS#11 token (KEY_MANAGEMENT=pkcs11; src/config/config.ts). */
export interface Pkcs11Config {
  /** KMS_PKCS11_MODULE: the token's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
  readonly module: string;
  /** KMS_PKCS11_TOKEN_LABEL: the token, by its label. */
  readonly tokenLabel: string;
  /** KMS_PKCS11_PIN or the file KMS_PKCS11_PIN_FILE names: the user PIN. Never logged. */
  readonly pin: string;
  /** KMS_PKCS11_KEY_LABEL: the master key's versions are the token's AES keys labelled `<label>.<n>`. */
  readonly keyLabel: string;
  /** KMS_PKCS11_REFRESH_MS: how often the token is searched for a newer version before a wrap. */
  readonly refreshMs: number;
}

/** KEY_MANAGEMENT=pkcs11 and its KMS_PKCS11_* variables (the PIN from KMS_PKCS11_PIN or the file KMS_PKCS11_PIN_FILE names; never echoed). */
function pkcs11Config(env: Env): Pkcs11Config | undefined {
  if (oneOf(env, 'KEY_MANAGEMENT', ['local', 'pkcs11'] as const, 'local') === 'local') return undefined;
  const module = text(env, 'KMS_PKCS11_MODULE');
  if (module === undefined) throw new ConfigError('KMS_PKCS11_MODULE', "is required when KEY_MANAGEMENT=pkcs11: the path of the token's PKCS#11 library");
  const tokenLabel = text(env, 'KMS_PKCS11_TOKEN_LABEL');
  if (tokenLabel === undefined) throw new ConfigError('KMS_PKCS11_TOKEN_LABEL', 'is required when KEY_MANAGEMENT=pkcs11');
  const pinFile = text(env, 'KMS_PKCS11_PIN_FILE');
  let pin = text(env, 'KMS_PKCS11_PIN');
  if (pinFile !== undefined) {
    try {
      pin = readFileSync(pinFile, 'utf8').trim();
    } catch {
      throw new ConfigError('KMS_PKCS11_PIN_FILE', 'cannot be read');
    }
  }
  if (pin === undefined || pin === '') throw new ConfigError('KMS_PKCS11_PIN', 'or KMS_PKCS11_PIN_FILE is required when KEY_MANAGEMENT=pkcs11');
  const keyLabel = text(env, 'KMS_PKCS11_KEY_LABEL') ?? 'ivl-master';
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(keyLabel)) throw new ConfigError('KMS_PKCS11_KEY_LABEL', 'must be 1 to 40 letters, digits, _ or -');
  return { module, tokenLabel, pin, keyLabel, refreshMs: integer(env, 'KMS_PKCS11_REFRESH_MS', 30_000, 100, 3_600_000) };
}

function text(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** Five years: see docs/data-protection.md (the record-keeping period Nigerian AML rules set for customer identification). */
export const DEFAULT_RETENTION_DAYS = 1825;
/** A bound on any retention period: twenty years. */
export const MAX_RETENTION_DAYS = 7300;

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

function secret(env: Env, name: string, minLength: number): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  if (raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters`);
  return raw;
}

function scopeList(env: Env, name: string): readonly Scope[] {
  const raw = text(env, name);
  if (raw === undefined) return SCOPES;
  const scopes = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) throw new ConfigError(name, `has unknown scopes: ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
  return [...new Set(scopes)] as Scope[];
}

/** `SCOPE_PRICES=nin=5000,bvn=7500`: overrides of the default price per scope, in kobo. */
function scopePrices(env: Env, name: string): Readonly<Record<Scope, number>> {
  const prices = defaultScopePricesKobo();
  const raw = text(env, name);
  if (raw === undefined) return prices;
  for (const pair of raw.split(',')) {
    const [scope, value] = pair.split('=').map((part) => part.trim());
    if (!isScope(scope)) throw new ConfigError(name, `has an unknown scope "${scope}"`);
    if (value === undefined || !/^\d+$/.test(value) || Number(value) > MAX_PRICE_KOBO) {
      throw new ConfigError(name, `needs a price in kobo from 0 to ${MAX_PRICE_KOBO} for ${scope}`);
    }
    prices[scope] = Number(value);
  }
  return prices;
}

/** A 32-byte key as 64 hex characters or base64; the value is never echoed. */
function key32(env: Env, name: string): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return raw;
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) && Buffer.from(raw, 'base64').length === 32) return raw;
  throw new ConfigError(name, 'must be 32 bytes, as 64 hex characters or base64');
}

/** SANDBOX_LATENCY_MS: `250` (always that long) or `200-1500` (evenly between the two), 0 to 60,000 ms. */
function latencyRange(env: Env, name: string): { min: number; max: number } {
  const raw = text(env, name);
  if (raw === undefined) return { min: 0, max: 0 };
  const match = /^(\d{1,5})(?:\s*-\s*(\d{1,5}))?$/.exec(raw);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  if (match === null || max > 60_000 || min > max) throw new ConfigError(name, `must be milliseconds as 250 or a range as 200-1500, from 0 to 60000, got "${raw}"`);
  return { min, max };
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (/^(true|1|on|yes)$/i.test(raw)) return true;
  if (/^(false|0|off|no)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/** pino redact paths: dotted keys, bracketed quoted keys and `*` wildcards, nothing else. */
const REDACT_PATH = /^(?:[A-Za-z_$*][\w$*-]*|\[(?:"[^"\]]+"|'[^'\]]+'|\*)\])(?:\.[A-Za-z_$*][\w$*-]*|\[(?:"[^"\]]+"|'[^'\]]+'|\*)\])*$/;

function redactPaths(env: Env, name: string): readonly string[] {
  const raw = text(env, name);
  if (raw === undefined) return [];
  const paths = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const invalid = paths.find((path) => !REDACT_PATH.test(path));
  if (invalid !== undefined) throw new ConfigError(name, `has an invalid path "${invalid}" (use req.headers["x-custom"], a.b.c or a.*.c)`);
  return paths;
}

function origins(env: Env, name: string): readonly string[] {
  const raw = text(env, name);
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((origin) => {
      let parsed: URL;
      try {
        parsed = new URL(origin);
      } catch {
        throw new ConfigError(name, `has an invalid origin "${origin}"`);
      }
      if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.origin !== origin.replace(/\/$/, '')) {
        throw new ConfigError(name, `needs origins like https://app.example.com (scheme, host, optional port), got "${origin}"`);
      }
      return parsed.origin;
    });
}

/** TRUST_PROXY: `1` (hops), or `10.0.0.0/8, 192.168.1.5` (addresses and CIDR ranges); unset or `false`: none. */
function trustProxy(env: Env, name: string): false | number | readonly string[] {
  const raw = text(env, name);
  if (raw === undefined || /^(false|0|off|no)$/i.test(raw)) return false;
  // Trusting every hop would let any client write its own address and scheme.
  if (/^(true|on|yes)$/i.test(raw))
    throw new ConfigError(name, "must be a hop count or the proxies' addresses and CIDR ranges, not true (any client could then choose its own address)");
  if (/^\d+$/.test(raw)) return integer(env, name, 0, 1, 10);
  const entries = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const maxBits = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > maxBits))) {
      throw new ConfigError(name, `has "${entry}", which is neither a hop count nor an IP address or CIDR range`);
    }
  }
  return entries;
}

/**
 * DATA_ENCRYPTION_KEY: required beside DATABASE_URL, where a key generated on one machine's disk
 * would be lost with it (and every verification's personal data with the key).
 */
function dataEncryptionKey(env: Env, pkcs11: boolean): string | undefined {
  const value = key32(env, 'DATA_ENCRYPTION_KEY');
  if (value === undefined && !pkcs11 && text(env, 'DATABASE_URL') !== undefined) {
    throw new ConfigError('DATA_ENCRYPTION_KEY', 'is required when DATABASE_URL is set: the master key of the personal data (32 bytes, base64; see docs/data-protection.md)');
  }
  return value;
}

/** Reads and validates the environment once. Throws a ConfigError naming the first bad variable. */
function relyingParty(publicBaseUrl: string | undefined, port: number): { origin: string; rpId: string } {
  const origin = new URL(publicBaseUrl ?? `http://localhost:${port}`);
  return { origin: origin.origin, rpId: origin.hostname };
}

export function loadConfig(env: Env = process.env): AppConfig {
  const kind = oneOf(env, 'EVENT_STORE', ['postgres', 'esdb'] as const, 'postgres');
  const esdbConnectionString = url(env, 'EVENTSTORE_CONNECTION_STRING', ['esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrentdb+discover:']);
  if (kind === 'esdb' && esdbConnectionString === undefined) {
    throw new ConfigError('EVENTSTORE_CONNECTION_STRING', 'is required when EVENT_STORE=esdb');
  }
  const dataDir = resolve(text(env, 'DATA_DIR') ?? '.data');
  const pkcs11 = pkcs11Config(env);
  const providerTimeoutMs = integer(env, 'PROVIDER_TIMEOUT_MS', 10_000, 50, 120_000);
  const upstreamTimeoutMs = (name: string) => integer(env, name, Math.max(25, Math.floor(providerTimeoutMs / 2)), 25, providerTimeoutMs);
  const recoveryDeadlineMs = integer(env, 'RECOVERY_DEADLINE_MS', 120_000, 1_000, 86_400_000);
  // Recovery fails a check still open past its deadline. One still waiting on its provider (a call
  // that is paid for anyway) must never be: the deadline leaves the writes before and after the
  // call at least as long as the call itself.
  if (recoveryDeadlineMs < 2 * providerTimeoutMs) {
    throw new ConfigError('RECOVERY_DEADLINE_MS', `must be at least ${2 * providerTimeoutMs} (twice PROVIDER_TIMEOUT_MS), got ${recoveryDeadlineMs}`);
  }
  const production = text(env, 'NODE_ENV') === 'production';
  const headersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 500, 120_000);
  const requestTimeoutMs = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 60_000, 1_000, 600_000);
  // Node refuses a headers limit above the whole request's, which includes the headers.
  if (requestTimeoutMs < headersTimeoutMs)
    throw new ConfigError('HTTP_REQUEST_TIMEOUT_MS', `must be at least HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}), got ${requestTimeoutMs}`);
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const rateLimitStore = oneOf(env, 'RATE_LIMIT_STORE', RATE_LIMIT_STORES, redisUrl === undefined ? 'memory' : 'redis');
  if (rateLimitStore === 'redis' && redisUrl === undefined) throw new ConfigError('REDIS_URL', 'is required when RATE_LIMIT_STORE=redis');
  return {
    serviceName: text(env, 'SERVICE_NAME') ?? 'identity-verification-service',
    host: text(env, 'HOST') ?? '0.0.0.0',
    port: integer(env, 'PORT', 3000, 0, 65_535),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    dataDir,
    database: {
      url: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
      embeddedPort: text(env, 'EMBEDDED_PG_PORT') === undefined ? undefined : integer(env, 'EMBEDDED_PG_PORT', 0, 1, 65_535),
      poolSize: integer(env, 'DB_POOL_SIZE', 20, 1, 500),
    },
    eventStore: { kind, esdbConnectionString },
    admin: {
      token: secret(env, 'ADMIN_TOKEN', 24),
      auditorToken: secret(env, 'AUDITOR_TOKEN', 24),
      changeWaitMs: integer(env, 'OPERATOR_CHANGE_WAIT_MS', 10_000, 0, 120_000),
    },
    verifications: {
      defaultActiveScopes: scopeList(env, 'DEFAULT_ACTIVE_SCOPES'),
      pricesKobo: scopePrices(env, 'SCOPE_PRICES'),
      // Above one funding's limit the wallet would refuse it at every registration and every sweep.
      sandboxCreditKobo: integer(env, 'SANDBOX_CREDIT_KOBO', 1_000_000, 0, MAX_FUNDING_KOBO),
      providerTimeoutMs,
      recoveryDeadlineMs,
      recoveryIntervalMs: integer(env, 'RECOVERY_INTERVAL_MS', 15_000, 100, 3_600_000),
      retentionDays: integer(env, 'PERSONAL_DATA_RETENTION_DAYS', DEFAULT_RETENTION_DAYS, 1, MAX_RETENTION_DAYS),
      retentionSweepIntervalMs: integer(env, 'RETENTION_SWEEP_INTERVAL_MS', 3_600_000, 1_000, 86_400_000),
    },
    portraits: {
      encryptionKey: secret(env, 'PORTRAIT_ENCRYPTION_KEY', 32),
      directory: resolve(text(env, 'PORTRAIT_DIR') ?? resolve(dataDir, 'portraits')),
      urlTtlSeconds: integer(env, 'PORTRAIT_URL_TTL_SECONDS', 900, 10, 86_400),
      publicBaseUrl: url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']),
    },
    dataProtection: {
      masterKey: dataEncryptionKey(env, pkcs11 !== undefined),
      requestIdHashKey: key32(env, 'REQUEST_ID_HASH_KEY'),
      pkcs11,
      organizationKeyMaxWraps: integer(env, 'ORGANIZATION_KEY_MAX_WRAPS', 2 ** 32 - 2 ** 26, 1, 2 ** 32),
    },
    runProjections: oneOf(env, 'RUN_PROJECTIONS', ['auto', 'true', 'false'] as const, 'auto'),
    providers: {
      credentialsKey: key32(env, 'PROVIDER_CREDENTIALS_KEY'),
      dojahBaseUrl: url(env, 'DOJAH_BASE_URL', ['http:', 'https:']) ?? 'https://api.dojah.io',
      premblyBaseUrl: url(env, 'PREMBLY_BASE_URL', ['http:', 'https:']) ?? 'https://api.prembly.com',
      timeoutMs: { dojah: upstreamTimeoutMs('DOJAH_TIMEOUT_MS'), prembly: upstreamTimeoutMs('PREMBLY_TIMEOUT_MS') },
      breakerFailures: integer(env, 'PROVIDER_BREAKER_FAILURES', 5, 1, 1_000),
      breakerHalfOpenMs: integer(env, 'PROVIDER_BREAKER_HALF_OPEN_MS', 30_000, 10, 3_600_000),
      retryAttempts: integer(env, 'PROVIDER_RETRY_ATTEMPTS', 1, 0, 3),
      sandboxLatencyMs: latencyRange(env, 'SANDBOX_LATENCY_MS'),
    },
    operations: {
      production,
      logRedactPaths: redactPaths(env, 'LOG_REDACT_PATHS'),
      docsEnabled: flag(env, 'DOCS_ENABLED', !production),
      metricsEnabled: flag(env, 'METRICS_ENABLED', !production),
      trustProxy: trustProxy(env, 'TRUST_PROXY'),
      corsOrigins: origins(env, 'CORS_ORIGINS'),
      headersTimeoutMs,
      requestTimeoutMs,
      shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 25_000, 1_000, 600_000),
    },
    console: {
      sessionIdleMs: integer(env, 'CONSOLE_SESSION_IDLE_MINUTES', 30, 1, 10_080) * 60_000,
      sessionMaxMs: integer(env, 'CONSOLE_SESSION_MAX_HOURS', 12, 1, 720) * 3_600_000,
      secureCookies: flag(env, 'CONSOLE_SECURE_COOKIES', false),
      smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
      mailLogOnly: flag(env, 'CONSOLE_MAIL_LOG_ONLY', false),
      mailFrom: text(env, 'MAIL_FROM') ?? 'Identity verification console <no-reply@localhost>',
      mailRequestsPerHour: integer(env, 'CONSOLE_MAIL_REQUESTS_PER_HOUR', 30, 1, 1_000_000),
      mailsPerRecipientPerHour: integer(env, 'CONSOLE_MAILS_PER_RECIPIENT_PER_HOUR', 5, 1, 1_000),
      webauthn: relyingParty(url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']), integer(env, 'PORT', 3000, 0, 65_535)),
    },
    webhooks: {
      allowPrivateTargets: flag(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 30_000),
      concurrencyPerEndpoint: integer(env, 'WEBHOOK_CONCURRENCY_PER_ENDPOINT', 4, 1, 64),
      send: flag(env, 'WEBHOOK_SEND', true),
    },
    payments: {
      paystackSecretKey: secret(env, 'PAYSTACK_SECRET_KEY', 16),
      paystackBaseUrl: url(env, 'PAYSTACK_BASE_URL', ['http:', 'https:']) ?? 'https://api.paystack.co',
      paystackTimeoutMs: integer(env, 'PAYSTACK_TIMEOUT_MS', 10_000, 50, 60_000),
      paystackPreferredBank: text(env, 'PAYSTACK_PREFERRED_BANK') ?? 'wema-bank',
      minTopUpKobo: integer(env, 'TOPUP_MIN_KOBO', 10_000, 100, MAX_FUNDING_KOBO),
      maxTopUpKobo: integer(env, 'TOPUP_MAX_KOBO', 500_000_000, 100, MAX_FUNDING_KOBO),
      dailyLimitKobo: integer(env, 'TOPUP_DAILY_LIMIT_KOBO', 1_000_000_000, 100, Number.MAX_SAFE_INTEGER),
      recoveryIntervalMs: integer(env, 'TOPUP_RECOVERY_INTERVAL_MS', 30_000, 100, 3_600_000),
    },
    rateLimits: {
      store: rateLimitStore,
      perMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, MAX_REQUESTS_PER_MINUTE),
      redisUrl,
    },
  };
}

/**
 * What the API server needs beyond what every process needs (the projection workers and the CLIs
 * hand out no links): in production, the public base of the portrait links, since the listening
 * address is rarely what integrators reach and a request's Host header is the caller's to choose.
 */
export function assertServesHttp(config: AppConfig): void {
  if (config.operations.production && config.portraits.publicBaseUrl === undefined) {
    throw new ConfigError('PUBLIC_BASE_URL', 'is required when NODE_ENV=production: the public base of the portrait links the API hands out, e.g. https://api.example.com');
  }
  // The console's mail carries one-time links (sign-up confirmations, resets, invitations): a
  // deployment that sends none must have chosen so, not forgotten a variable.
  if (config.database.url !== undefined && config.console.smtpUrl === undefined && !config.console.mailLogOnly) {
    throw new ConfigError(
      'SMTP_URL',
      'is required outside the embedded default (DATABASE_URL is set): the console mails one-time links for sign-ups, password resets and invitations. Set SMTP_URL, or set CONSOLE_MAIL_LOG_ONLY=true to send no mail and log only that each was queued',
    );
  }
}
