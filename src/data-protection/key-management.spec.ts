import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { LocalKeyManagement } from './key-management.port.js';
import { parseMasterKey } from './master-key.js';
import { HISTORY_CHECKPOINT_KEY_INFO, historyCheckpointKey } from '../audit/history-checkpoints.js';

describe('The local key management (master key in memory)', () => {
  it('wraps and unwraps a key, bound to its context, and names the master key without revealing it', async () => {
    const master = randomBytes(32);
    const kms = new LocalKeyManagement(master);
    const kek = randomBytes(32);
    const wrapped = await kms.wrap(kek, 'kek\norg_a');
    expect(Buffer.from(wrapped, 'base64').includes(kek)).toBe(false);
    expect(await kms.unwrap(wrapped, 'kek\norg_a')).toEqual(kek);
    await expect(kms.unwrap(wrapped, 'kek\norg_b')).rejects.toThrow();
    await expect(new LocalKeyManagement(randomBytes(32)).unwrap(wrapped, 'kek\norg_a')).rejects.toThrow();
    expect(kms.masterKeyId).toBe(new LocalKeyManagement(Buffer.from(master)).masterKeyId);
    expect(kms.masterKeyId).not.toContain(master.toString('hex').slice(0, 16));
  });

  it('takes DATA_ENCRYPTION_KEY as base64 or hex, and names the variable when it is not 32 bytes', () => {
    const key = randomBytes(32);
    expect(parseMasterKey(key.toString('base64'))).toEqual(key);
    expect(parseMasterKey(key.toString('hex'))).toEqual(key);
    expect(() => parseMasterKey(randomBytes(16).toString('base64'))).toThrow('DATA_ENCRYPTION_KEY');
  });

  it('derives the wallet-history checkpoint key it always did (checkpoints written before the port derived it still verify), and another key per purpose', async () => {
    const master = randomBytes(32);
    const kms = new LocalKeyManagement(master);
    expect(await kms.derive(HISTORY_CHECKPOINT_KEY_INFO)).toEqual(historyCheckpointKey(master));
    expect(await kms.derive('another purpose')).not.toEqual(historyCheckpointKey(master));
  });
});
