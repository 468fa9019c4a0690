import { Global, Module } from '@nestjs/common';
import { AuthenticatedKeyCache } from './key-cache.js';

/**
 * The one key cache of the process: the API-key guard fills it and the organizations feature
 * clears it on revocation, suspension and scope changes, so both must get the same instance.
 */
@Global()
@Module({ providers: [AuthenticatedKeyCache], exports: [AuthenticatedKeyCache] })
export class AuthModule {}
