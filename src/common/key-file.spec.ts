import { describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatedKeyFile } from './key-file.js';

const hex = (key: Buffer) => key.toString('hex');
/** Padded in front to a few megabytes: writing the file takes long enough for a reader to come in between, and what it would read of it holds no key. */
const paddedHex = (key: Buffer) => `${' '.repeat(4 * 1024 * 1024)}${hex(key)}`;
const fromHex = (text: string) => {
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error('not a key');
  return Buffer.from(text, 'hex');
};

async function inFreshDirectory(work: (directory: string) => Promise<void>): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'key-file-'));
  try {
    await work(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

describe('A generated key file', () => {
  it('given no file, when many ask for it at once, then all get the one key written there, readable by the owner only', () =>
    inFreshDirectory(async (directory) => {
      const path = join(directory, 'nested', 'test.key');
      const keys = await Promise.all(Array.from({ length: 16 }, () => generatedKeyFile(path, paddedHex, fromHex)));
      const written = fromHex((await readFile(path, 'utf8')).trim());
      for (const key of keys) expect(key).toEqual(written);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect(await readdir(join(directory, 'nested'))).toEqual(['test.key']);
    }));

  it('given a file, when asked, then it answers the key there and leaves the file as it was', () =>
    inFreshDirectory(async (directory) => {
      const path = join(directory, 'test.key');
      const existing = Buffer.alloc(32, 7);
      await writeFile(path, `${hex(existing)}\n`);
      expect(await generatedKeyFile(path, hex, fromHex)).toEqual(existing);
      expect(await readFile(path, 'utf8')).toBe(`${hex(existing)}\n`);
    }));

  it('given a file that holds no key, when asked, then it fails rather than replacing it', () =>
    inFreshDirectory(async (directory) => {
      const path = join(directory, 'test.key');
      await writeFile(path, 'garbage');
      await expect(generatedKeyFile(path, hex, fromHex)).rejects.toThrow('not a key');
      expect(await readFile(path, 'utf8')).toBe('garbage');
    }));
});
