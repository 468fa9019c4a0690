import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.js';
import { ConfigError } from '../config/config.js';
import { sandboxPortrait } from '../providers/sandbox.provider.js';
import { FilePortraitStore, MAX_PORTRAIT_RECORD_BYTES, parseKey } from './portrait.store.js';

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

  it("deletes a portrait: its record zeroed in place (the segment's other portraits stay readable), then unknown; deleting again is harmless", async () => {
    const config = loadConfig({ DATA_DIR: await mkdtemp(join(tmpdir(), 'portraits-deleted-')) });
    const store = await FilePortraitStore.open(config);
    const key = randomBytes(32);
    const keyOf = async () => key;
    const [first, second] = [sandboxPortrait('first'), sandboxPortrait('second')];
    const firstId = await store.put('org_A', 'image/png', first, { reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', key });
    const secondId = await store.put('org_A', 'image/png', second, { reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TS', key });
    await store.delete(firstId);
    await store.delete(firstId);
    expect(await store.get(firstId, keyOf)).toBeNull();
    expect(await store.owner(firstId)).toBeNull();
    expect((await store.get(secondId, keyOf))?.bytes).toEqual(second);
    const [segment] = await readdir(config.portraits.directory);
    const onDisk = await readFile(join(config.portraits.directory, segment));
    const [, , offsetHex, lengthHex] = /^prt_([0-9a-f]{16})_([0-9a-f]+)_([0-9a-f]+)$/.exec(firstId) ?? [];
    expect(onDisk.subarray(Number.parseInt(offsetHex, 16), Number.parseInt(offsetHex, 16) + Number.parseInt(lengthHex, 16)).every((byte) => byte === 0)).toBe(true);
  });

  it("seals a verification's portrait under its data key: readable with it, erased (null) without it, refused under another verification's", async () => {
    const store = await FilePortraitStore.open(loadConfig({ DATA_DIR: await mkdtemp(join(tmpdir(), 'portraits-sealed-')) }));
    const image = sandboxPortrait('sealed');
    const dataKey = randomBytes(32);
    const reference = 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
    const id = await store.put('org_A', 'image/png', image, { reference, key: dataKey });
    const keys = new Map([[reference, dataKey]]);
    const keyOf = async (asked: string) => keys.get(asked) ?? null;
    expect(await store.get(id, keyOf)).toEqual({ organizationId: 'org_A', contentType: 'image/png', bytes: image });
    expect(await store.owner(id)).toBe('org_A');
    // Another verification's key: the record is bound to its own.
    await expect(store.get(id, async () => randomBytes(32))).rejects.toThrow();
    keys.delete(reference);
    expect(await store.get(id, keyOf)).toBeNull();
    await expect(store.get(id)).rejects.toThrow(/without one/);
    await store.close();
  });

  it('refuses a record edited to claim another owner', async () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    const store = await FilePortraitStore.open(config);
    const id = await store.put('org_A', 'image/png', sandboxPortrait('x'));
    const [, segment, offset] = /^prt_([0-9a-f]{16})_([0-9a-f]+)_/.exec(id) ?? [];
    const path = join(config.portraits.directory, `${segment}.seg`);
    const file = await readFile(path);
    const at = Number.parseInt(offset, 16) + 6; // first character of the owner
    file[at] = 'B'.charCodeAt(0) === file[at] ? 'C'.charCodeAt(0) : 'B'.charCodeAt(0);
    await writeFile(path, file);
    await expect(store.get(id)).rejects.toThrow();
    await store.close();
  });

  it('keeps concurrent puts apart, moves to a new segment when one is full, and reads every portrait back', async () => {
    const config = loadConfig({ DATA_DIR: await mkdtemp(join(tmpdir(), 'portraits-segments-')) });
    const store = await FilePortraitStore.open(config, { segmentMaxBytes: 1024 });
    const images = Array.from({ length: 60 }, (_, index) => sandboxPortrait(`person-${index}`));
    const ids = await Promise.all(images.map((image, index) => store.put(index % 2 === 0 ? 'org_A' : 'org_B', 'image/png', image)));
    expect(new Set(ids).size).toBe(60);
    const segments = (await readdir(config.portraits.directory)).filter((name) => name.endsWith('.seg'));
    expect(segments.length).toBeGreaterThan(1);
    for (const [index, id] of ids.entries()) {
      expect(await store.get(id)).toEqual({ organizationId: index % 2 === 0 ? 'org_A' : 'org_B', contentType: 'image/png', bytes: images[index] });
    }
    await store.close();
    // Another process (a new store on the same directory) reads them too, and writes to a segment of its own.
    const other = await FilePortraitStore.open(config, { segmentMaxBytes: 1024 });
    expect((await other.get(ids[7]))?.bytes).toEqual(images[7]);
    await other.put('org_A', 'image/png', images[0]);
    expect((await readdir(config.portraits.directory)).filter((name) => name.endsWith('.seg')).length).toBe(segments.length + 1);
    await other.close();
    await rm(config.dataDir, { recursive: true, force: true });
  });

  it('still reads a portrait stored as a file of its own by an earlier version', async () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    const store = await FilePortraitStore.open(config);
    const key = Buffer.from((await readFile(join(dataDir, 'portrait.key'), 'utf8')).trim(), 'hex');
    const id = `prt_${randomBytes(16).toString('hex')}`;
    const image = sandboxPortrait('legacy');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(`${id}\norg_A\nimage/png`, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(image), cipher.final()]);
    const organization = Buffer.from('org_A');
    await writeFile(
      join(config.portraits.directory, `${id}.bin`),
      Buffer.concat([Buffer.from('PRT1'), Buffer.from([0, organization.length]), organization, iv, cipher.getAuthTag(), ciphertext]),
    );
    expect(await store.get(id)).toEqual({ organizationId: 'org_A', contentType: 'image/png', bytes: image });
    await store.close();
  });

  it('never reads more than a record can hold, whatever length an id claims or a file has', async () => {
    const config = loadConfig({ DATA_DIR: await mkdtemp(join(tmpdir(), 'portraits-bounded-')) });
    const store = await FilePortraitStore.open(config);
    // Files far larger than any record, sparse (no disk used), that begin like a record.
    const oversized = MAX_PORTRAIT_RECORD_BYTES + 1;
    const segment = join(config.portraits.directory, 'abcdefabcdefabcd.seg');
    await writeFile(segment, Buffer.concat([Buffer.from('PRT1'), Buffer.from([0, 5]), Buffer.from('org_A')]));
    await truncate(segment, 0xffffff + 16);
    const legacyId = `prt_${'ab'.repeat(16)}`;
    const legacy = join(config.portraits.directory, `${legacyId}.bin`);
    await writeFile(legacy, Buffer.concat([Buffer.from('PRT1'), Buffer.from([0, 5]), Buffer.from('org_A')]));
    await truncate(legacy, oversized);
    for (const id of ['prt_abcdefabcdefabcd_0_ffffff', `prt_abcdefabcdefabcd_0_${oversized.toString(16)}`, legacyId]) {
      expect(await store.owner(id)).toBeNull();
      expect(await store.get(id)).toBeNull();
    }
    await store.close();
    await rm(config.dataDir, { recursive: true, force: true });
  });

  it('answers null for unknown or malformed ids', async () => {
    const store = await FilePortraitStore.open(loadConfig({ DATA_DIR: dataDir }));
    expect(await store.get('prt_00000000000000000000000000000000')).toBeNull();
    expect(await store.get('../../etc/passwd')).toBeNull();
    expect(await store.get('prt_0000000000000000_0_10')).toBeNull();
  });

  it('takes a configured key as hex or base64, and names the variable when it is wrong', () => {
    expect(parseKey('ab'.repeat(32))).toHaveLength(32);
    expect(parseKey(Buffer.alloc(32, 7).toString('base64'))).toHaveLength(32);
    expect(() => parseKey('not-a-key-but-long-enough-to-pass-config')).toThrow(ConfigError);
  });
});
