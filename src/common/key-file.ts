import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The embedded default's generated keys: the 32-byte key in the file at `path` (read with
 * `parse`), or, when there is none yet, a new one written there (as `encode` writes it), readable
 * by the owner only.
 *
 * The key is written whole under a name of its own and then linked into place, so no reader sees
 * the file half-written: at a first start several modules ask for the same key at once, and one of
 * them reading the file between its creation and its write would fail the start. `link` refuses an
 * existing name, so two writers (two processes starting together) never overwrite each other's key:
 * the one that loses reads the winner's.
 */
export async function generatedKeyFile(path: string, encode: (key: Buffer) => string, parse: (text: string) => Buffer): Promise<Buffer> {
  try {
    return parse((await readFile(path, 'utf8')).trim());
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  const draft = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    await writeFile(draft, encode(key), { mode: 0o600, flag: 'wx' });
    await link(draft, path);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return parse((await readFile(path, 'utf8')).trim());
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}
