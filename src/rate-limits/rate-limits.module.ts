import { Global, Module } from '@nestjs/common';
import { RequestRateLimiter } from './request-rate-limiter.js';

/** Global, so the API key guard, which every feature module provides for itself, gets the one limiter. */
@Global()
@Module({ providers: [RequestRateLimiter], exports: [RequestRateLimiter] })
export class RateLimitsModule {}
