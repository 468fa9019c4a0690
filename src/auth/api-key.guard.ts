import { type CanActivate, type ExecutionContext, Inject, Injectable, Logger, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { Forbidden, RateLimited, Unauthenticated } from '../common/errors.js';
import type { Actor } from '../common/event.js';
import type { OrganizationStatus } from '../common/organization-status.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { bindRequestLog } from '../logging/request-log.js';
import { hashApiKey } from './api-key.js';
import { RequestRateLimiter } from '../rate-limits/request-rate-limiter.js';
import { AuthenticatedKeyCache } from './key-cache.js';

export const API_KEY_HEADER = 'x-service-key';
/** Longer than any key we issue (prefix + 43 base64url characters); longer headers are not keys. */
const MAX_KEY_LENGTH = 200;
const KEY_FORMAT = /^service_(test|live)_[A-Za-z0-9_-]{16,}$/;
/** `api_key_usage.last_used_at` is written at most this often per key and process. */
const USAGE_WRITE_INTERVAL_MS = 60_000;
/** Bound on the in-memory map of last usage writes. */
const MAX_TRACKED_KEYS = 10_000;

const ANY_ORGANIZATION_STATUS = 'apiKey:anyOrganizationStatus';

/**
 * Marks a route (or a controller) that reads or erases the organization's own data: its keys may
 * use it whatever the organization's status, suspended or (for live keys) not yet approved. Every
 * other keyed route, running a check first of all, needs an organization that may run checks
 * (assertMayRunChecks). Routes are closed by default, so a new route has to opt in.
 */
export const AnyOrganizationStatus = (): MethodDecorator & ClassDecorator => SetMetadata(ANY_ORGANIZATION_STATUS, true);

/** Who is calling, as the guard attaches it to the request. */
export interface AuthenticatedKey {
  readonly keyId: string;
  readonly organizationId: string;
  readonly environment: Environment;
  /** null: every scope active for the organization. */
  readonly keyScopes: readonly string[] | null;
  readonly organization: {
    readonly status: OrganizationStatus;
    readonly approved: boolean;
    readonly activeScopes: readonly string[];
    /** Per-scope price overrides in kobo. */
    readonly prices: Readonly<Record<string, number>>;
    /** Upstream provider per environment (empty until an operator configures one). */
    readonly providers: Readonly<Record<string, unknown>>;
    /** The operators' override of RATE_LIMIT_PER_MINUTE; null: the default. */
    readonly rateLimitPerMinute: number | null;
  };
}

export interface KeyedRequest extends FastifyRequest {
  apiKey?: AuthenticatedKey;
}

interface KeyRow {
  key_id: string;
  organization_id: string;
  environment: string;
  scopes: string[] | null;
  status: OrganizationStatus;
  approved: boolean;
  active_scopes: string[];
  prices: Record<string, number>;
  providers: Record<string, unknown>;
  rate_limit_per_minute: number | null;
}

/**
 * Authenticates `X-Service-Key` against the `api_keys` read model.
 *
 * The key is never compared as a string: its SHA-256 is looked up through the unique index on
 * `key_hash`. An attacker timing the lookup learns at best a prefix of a hash of their own guess,
 * which says nothing about any stored key (finding a key from its hash means inverting SHA-256 on
 * 256 random bits), so the lookup is as safe as a constant-time compare and needs no scan.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger('ApiKeyGuard');
  private readonly lastUsageWrite = new Map<string, number>();
  private readonly reading = new Map<string, Promise<KeyRow | undefined>>();

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(RequestRateLimiter) private readonly limiter: RequestRateLimiter,
    @Inject(AuthenticatedKeyCache) private readonly cache: AuthenticatedKeyCache<KeyRow>,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const anyStatus = this.reflector.getAllAndOverride<boolean | undefined>(ANY_ORGANIZATION_STATUS, [context.getHandler(), context.getClass()]) === true;
    await this.admit(http.getRequest<KeyedRequest>(), http.getResponse<FastifyReply>(), { anyOrganizationStatus: anyStatus });
    return true;
  }

  /**
   * Authenticates the key, checks that its organization may run checks (unless the route is open
   * whatever its status: AnyOrganizationStatus), then counts the request against the key's rate
   * limit (429 with Retry-After past it). All before any handler, so a refused request writes nothing.
   */
  async admit(request: KeyedRequest, reply: FastifyReply, options: { anyOrganizationStatus?: boolean } = {}): Promise<AuthenticatedKey> {
    const key = await this.authenticate(request.headers[API_KEY_HEADER]);
    // Bound before the refusals, so that a 403's or a 429's log line names the key too.
    bindRequestLog(request, { organizationId: key.organizationId, keyId: key.keyId });
    if (options.anyOrganizationStatus !== true) assertMayRunChecks(key);
    const limit = await this.limiter.consume(key.keyId, key.organization.rateLimitPerMinute ?? this.config.rateLimits.perMinute);
    void reply.header('x-ratelimit-limit', limit.limit).header('x-ratelimit-remaining', limit.remaining).header('x-ratelimit-reset', limit.resetSeconds);
    if (!limit.allowed) {
      void reply.header('retry-after', limit.resetSeconds);
      throw new RateLimited(`Too many requests for this API key; at most ${limit.limit} a minute. Try again in ${limit.resetSeconds} s`, {
        limitPerMinute: limit.limit,
        retryAfterSeconds: limit.resetSeconds,
      });
    }
    request.apiKey = key;
    return key;
  }

  async authenticate(header: string | string[] | undefined): Promise<AuthenticatedKey> {
    if (header === undefined || header === '') throw new Unauthenticated('The X-Service-Key header is required');
    if (typeof header !== 'string' || header.length > MAX_KEY_LENGTH || !KEY_FORMAT.test(header)) {
      throw new Unauthenticated('The API key is not valid');
    }
    const keyHash = hashApiKey(header);
    // A key in this instance's short-lived cache (see KEY_CACHE_TTL_MS) goes on without an await.
    const row = this.cache.get(keyHash, Date.now()) ?? (await this.keyRow(keyHash));
    if (row === undefined || !isEnvironment(row.environment)) throw new Unauthenticated('The API key is not valid');
    // The environment is part of the key text and of the stored record: they must agree.
    if (!header.startsWith(`service_${row.environment}_`)) throw new Unauthenticated('The API key is not valid');

    this.recordUsage(row.key_id);
    return authenticatedKeyOf(row, row.environment);
  }

  /**
   * The console's playground runs a check on one of the organization's own keys, chosen by id
   * (or its newest active key of the environment), under the same rules as a request bearing it:
   * the organization may run checks, and the request counts against the key's rate limit.
   * undefined when the organization has no such active key.
   */
  async admitOwnKey(organizationId: string, environment: Environment, keyId: string | null, reply: FastifyReply): Promise<AuthenticatedKey | undefined> {
    const { rows } = await this.pool.query<KeyRow>(
      `select k.id as key_id, k.organization_id, k.environment, k.scopes,
              o.status, o.approved, o.active_scopes, o.prices, o.providers, o.rate_limit_per_minute
         from api_keys k join organizations o on o.id = k.organization_id
        where k.organization_id = $1 and k.environment = $2 and k.revoked_at is null and ($3::text is null or k.id = $3)
        order by k.created_at desc, k.id desc limit 1`,
      [organizationId, environment, keyId],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const key = authenticatedKeyOf(row, environment);
    assertMayRunChecks(key);
    const limit = await this.limiter.consume(key.keyId, key.organization.rateLimitPerMinute ?? this.config.rateLimits.perMinute);
    if (!limit.allowed) {
      void reply.header('retry-after', limit.resetSeconds);
      throw new RateLimited(`Too many requests for this API key; at most ${limit.limit} a minute. Try again in ${limit.resetSeconds} s`, {
        limitPerMinute: limit.limit,
        retryAfterSeconds: limit.resetSeconds,
      });
    }
    this.recordUsage(key.keyId);
    return key;
  }

  /** The key's read-model row, read for a key not in the cache. Requests of one key arriving while its row is being read wait for that read. */
  private keyRow(keyHash: string): Promise<KeyRow | undefined> {
    // Keyed by generation too: a request after an invalidate never joins a read that began before it.
    const readingKey = `${this.cache.generation}:${keyHash}`;
    let reading = this.reading.get(readingKey);
    if (reading === undefined) {
      reading = this.readKeyRow(keyHash).finally(() => this.reading.delete(readingKey));
      this.reading.set(readingKey, reading);
    }
    return reading;
  }

  private async readKeyRow(keyHash: string): Promise<KeyRow | undefined> {
    const startedAtMs = Date.now();
    const generation = this.cache.generation;
    const { rows } = await this.pool.query<KeyRow>(
      `select k.id as key_id, k.organization_id, k.environment, k.scopes,
              o.status, o.approved, o.active_scopes, o.prices, o.providers, o.rate_limit_per_minute
         from api_keys k join organizations o on o.id = k.organization_id
        where k.key_hash = $1 and k.revoked_at is null`,
      [keyHash],
    );
    // Cached from when the read started, so an entry never outlives the TTL counted from its read.
    if (rows[0] !== undefined) this.cache.set(keyHash, rows[0], startedAtMs, generation);
    return rows[0];
  }

  /** Fire-and-forget, at most once a minute per key: a failure here never fails the request. */
  private recordUsage(keyId: string): void {
    const nowMs = this.clock.now().getTime();
    const last = this.lastUsageWrite.get(keyId);
    if (last !== undefined && nowMs - last < USAGE_WRITE_INTERVAL_MS) return;
    if (this.lastUsageWrite.size >= MAX_TRACKED_KEYS) this.lastUsageWrite.clear();
    this.lastUsageWrite.set(keyId, nowMs);
    this.pool
      .query(
        `insert into api_key_usage (key_id, last_used_at) values ($1, $2)
         on conflict (key_id) do update set last_used_at = greatest(api_key_usage.last_used_at, excluded.last_used_at)`,
        [keyId, new Date(nowMs)],
      )
      .catch(() => this.logger.warn('Could not record the last use of an API key'));
  }
}

function authenticatedKeyOf(row: KeyRow, environment: Environment): AuthenticatedKey {
  return {
    keyId: row.key_id,
    organizationId: row.organization_id,
    environment,
    keyScopes: row.scopes,
    organization: {
      status: row.status,
      approved: row.approved,
      activeScopes: row.active_scopes,
      prices: row.prices ?? {},
      providers: row.providers ?? {},
      rateLimitPerMinute: row.rate_limit_per_minute,
    },
  };
}

/**
 * The organization's status decides whether its keys may run checks (the spec's 403 on
 * POST /v1/{scope}): not while it is suspended, and with a live key only once it is approved.
 * It never stops a key from reading or erasing the organization's own data.
 */
export function assertMayRunChecks(key: AuthenticatedKey): void {
  if (key.organization.status === 'suspended') throw new Forbidden('organization_suspended', 'The organization is suspended: its keys may read its data but run no checks');
  if (key.environment === 'live' && !key.organization.approved) {
    throw new Forbidden('organization_not_approved', 'Live keys need an approved organization; test keys work meanwhile');
  }
}

/** The request's authenticated key; the guard must have run. */
export function authenticatedKey(request: KeyedRequest): AuthenticatedKey {
  if (request.apiKey === undefined) throw new Error('invariant: ApiKeyGuard did not run on this route');
  return request.apiKey;
}

export function keyActor(key: AuthenticatedKey): Actor {
  return { type: 'api_key', id: key.keyId };
}
