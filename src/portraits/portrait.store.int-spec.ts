import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.js';
import { ConfigError } from '../config/config.js';
import { sandboxPortrait } from '../providers/sandbox.provider.js';
import { FilePortraitStore, parseKey } from './portrait.store.js';

describe('The encrypted portrait store (filesystem)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'portraits-'));
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('round-trips an image, keeps only ciphertext on disk, and generates its key once with mode 600', async () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    const store = await FilePortraitStore.open(config);
    const image = sandboxPortrait('someone');
    const id = await store.put('org_A', 'image/png', image);
    expect(await store.get(id)).toEqual({ organizationId: 'org_A', contentType: 'image/png', bytes: image });
    expect(await store.owner(id)).toBe('org_A');
    const [file] = await readdir(config.portraits.directory);
    const onDisk = await readFile(join(config.portraits.directory, file));
    expect(onDisk.includes(image.subarray(0, 16))).toBe(false);
    expect((await stat(join(dataDir, 'portrait.key'))).mode & 0o777).toBe(0o600);
    // A second process on the same data directory reads the same key.
    const again = await FilePortraitStore.open(config);
    expect((await again.get(id))?.bytes).toEqual(image);
  });

  it('refuses a file edited to claim another owner', async () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    const store = await FilePortraitStore.open(config);
    const id = await store.put('org_A', 'image/png', sandboxPortrait('x'));
    const path = join(config.portraits.directory, `${id}.bin`);
    const file = await readFile(path);
    file[6] = 'B'.charCodeAt(0) === file[6] ? 'C'.charCodeAt(0) : 'B'.charCodeAt(0); // first character of the owner
    await writeFile(path, file);
    await expect(store.get(id)).rejects.toThrow();
  });

  it('answers null for unknown or malformed ids', async () => {
    const store = await FilePortraitStore.open(loadConfig({ DATA_DIR: dataDir }));
    expect(await store.get('prt_00000000000000000000000000000000')).toBeNull();
    expect(await store.get('../../etc/passwd')).toBeNull();
  });

  it('takes a configured key as hex or base64, and names the variable when it is wrong', () => {
    expect(parseKey('ab'.repeat(32))).toHaveLength(32);
    expect(parseKey(Buffer.alloc(32, 7).toString('base64'))).toHaveLength(32);
    expect(() => parseKey('not-a-key-but-long-enough-to-pass-config')).toThrow(ConfigError);
  });
});
