import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { RandomIdGenerator } from '../common/ids.js';
import { generateApiKey, hashApiKey } from './api-key.js';

describe('API keys', () => {
  it('are service_<env>_ and at least 32 random bytes, kept as a SHA-256 hash with a recognisable prefix and last 4', () => {
    const ids = new RandomIdGenerator();
    const live = generateApiKey('live', ids);
    expect(live.key).toMatch(/^service_live_[A-Za-z0-9_-]{43,}$/);
    expect(Buffer.from(live.key.slice('service_live_'.length), 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(live.keyHash).toBe(createHash('sha256').update(live.key).digest('hex'));
    expect(hashApiKey(live.key)).toBe(live.keyHash);
    expect(live.prefix).toBe(live.key.slice(0, 'service_live_'.length + 4));
    expect(live.key.endsWith(live.last4)).toBe(true);
    const test = generateApiKey('test', ids);
    expect(test.key.startsWith('service_test_')).toBe(true);
    expect(test.key).not.toBe(generateApiKey('test', ids).key);
  });
});
