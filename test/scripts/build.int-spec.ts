import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BUILD = resolve('scripts/build.mjs');

/** `node scripts/build.mjs` as `npm start` and the CLIs run it, on a small tree of its own. */
describe('The incremental build', () => {
  let root: string;
  const build = async () => (await run(process.execPath, [BUILD], { cwd: root })).stderr;
  const identity = async (path: string) => {
    const info = await stat(join(root, path));
    return `${info.ino}:${info.mtimeMs}`;
  };
  /** A moment past the last build's start, so that what is saved now is newer than its stamp. */
  const tick = () => new Promise((wake) => setTimeout(wake, 200));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ledger-build-'));
    await copyFile(resolve('.swcrc'), join(root, '.swcrc'));
    await mkdir(join(root, 'src', 'inner'), { recursive: true });
    await writeFile(join(root, 'src', 'a.ts'), 'export const a: number = 1;\n');
    await writeFile(join(root, 'src', 'inner', 'b.ts'), "export const b: string = 'b';\n");
    await writeFile(join(root, 'src', 'a.spec.ts'), 'export {};\n');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('compiles every source but the tests on the first run', async () => {
    expect(await build()).toBe('built 2 files into dist/\n');
    expect(await readFile(join(root, 'dist/src/a.js'), 'utf8')).toContain('export const a = 1;');
    await expect(stat(join(root, 'dist/src/a.spec.js'))).rejects.toThrow();
  });

  it('writes nothing and says nothing when no source changed', async () => {
    const before = [await identity('dist/src/a.js'), await identity('dist/src/inner/b.js')];
    expect(await build()).toBe('');
    expect([await identity('dist/src/a.js'), await identity('dist/src/inner/b.js')]).toEqual(before);
  });

  it('compiles only the changed file, leaving the others as they are', async () => {
    const untouched = await identity('dist/src/inner/b.js');
    await tick();
    await writeFile(join(root, 'src/a.ts'), 'export const a: number = 2;\n');
    expect(await build()).toBe('built 1 files into dist/\n');
    expect(await readFile(join(root, 'dist/src/a.js'), 'utf8')).toContain('export const a = 2;');
    expect(await identity('dist/src/inner/b.js')).toBe(untouched);
  });

  it('removes the output of a deleted source', async () => {
    await tick();
    await rm(join(root, 'src/inner/b.ts'));
    expect(await build()).toBe('');
    await expect(stat(join(root, 'dist/src/inner/b.js'))).rejects.toThrow();
    await expect(stat(join(root, 'dist/src/inner/b.js.map'))).rejects.toThrow();
    expect(await readFile(join(root, 'dist/src/a.js'), 'utf8')).toContain('export const a = 2;');
  });
});
