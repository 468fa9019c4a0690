import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { MAX_REQUESTS_PER_MINUTE, type AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';

/** One fixed window per key: a minute from its first request. */
const WINDOW_SECONDS = 60;
/** A Redis that answers slower than this counts as down (the in-memory fallback decides). */
const REDIS_COMMAND_TIMEOUT_MS = 500;
/** Shares its shape with rate-limiter-flexible's RateLimiterPostgres; created by a migration. */
const POSTGRES_TABLE = 'rate_limits';
const KEY_PREFIX = 'ivl-v1';

export interface RateLimitDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Until the window resets, in whole seconds (at least 1). */
  readonly resetSeconds: number;
}

function decision(limit: number, result: RateLimiterRes): RateLimitDecision {
  return {
    allowed: result.consumedPoints <= limit,
    limit,
    remaining: Math.max(0, limit - result.consumedPoints),
    resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1_000)),
  };
}

/**
 * Counts requests per API key in fixed one-minute windows, through rate-limiter-flexible: in
 * memory (one process), or shared by every instance through PostgreSQL (`rate_limits`) or Redis.
 *
 * When the shared store cannot be reached the limiter fails open to a per-instance in-memory count
 * (the library's insurance limiter): a Redis or counters-table outage must not take the API down
 * with it, and a per-instance limit still bounds what one key can do meanwhile.
 */
@Injectable()
export class RequestRateLimiter implements OnApplicationShutdown {
  private readonly logger = new Logger('RateLimiter');
  private readonly limiter: RateLimiterAbstract;
  private readonly redis: Redis | undefined;
  private redisDown = false;

  constructor(
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
  ) {
    const { store, redisUrl } = config.rateLimits;
    if (store === 'redis' && redisUrl !== undefined) {
      this.redis = new Redis(redisUrl, {
        // Without these, commands queue while Redis is away and requests would hang on them.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        connectTimeout: 2_000,
      });
      this.redis.on('error', () => {
        if (!this.redisDown) this.logger.warn('Redis for rate limits is unreachable: counting per instance in memory until it returns');
        this.redisDown = true;
      });
      this.redis.on('ready', () => {
        if (this.redisDown) this.logger.log('Redis for rate limits is back');
        this.redisDown = false;
      });
    }
    this.limiter = this.createLimiter();
  }

  /** Counts one request of `keyId` against `perMinute`. Never throws. */
  async consume(keyId: string, perMinute: number): Promise<RateLimitDecision> {
    try {
      return decision(perMinute, await this.limiter.consume(keyId));
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return decision(perMinute, rejection);
      // Both the store and the in-memory fallback failed: let the request through rather than refuse every caller.
      this.logger.warn('The rate limiter failed; the request was let through');
      return { allowed: true, limit: perMinute, remaining: perMinute, resetSeconds: WINDOW_SECONDS };
    }
  }

  /**
   * The library counts and keeps the windows; the limit is compared here, because it differs per
   * organization (operators' overrides). The library's own ceiling is the highest limit allowed, so
   * one counter per key serves every limit and a changed limit applies to the window already running.
   */
  private createLimiter(): RateLimiterAbstract {
    const options = { points: MAX_REQUESTS_PER_MINUTE, duration: WINDOW_SECONDS, keyPrefix: KEY_PREFIX };
    switch (this.config.rateLimits.store) {
      case 'memory':
        return new RateLimiterMemory(options);
      case 'postgres':
        return new RateLimiterPostgres({
          ...options,
          storeClient: this.pool,
          storeType: 'pool',
          tableName: POSTGRES_TABLE,
          tableCreated: true,
          insuranceLimiter: new RateLimiterMemory(options),
        });
      case 'redis':
        return new RateLimiterRedis({
          ...options,
          storeClient: this.redis,
          rejectIfRedisNotReady: true,
          insuranceLimiter: new RateLimiterMemory(options),
        });
      default: {
        const _exhaustive: never = this.config.rateLimits.store;
        throw new Error(`invariant: unknown rate limit store ${String(_exhaustive)}`);
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis?.disconnect();
  }
}
