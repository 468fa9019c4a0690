// Compiles the TypeScript sources to dist/ with swc (type checking is `npm run typecheck`).
// swc is used rather than tsc because it builds the whole tree in well under a second.
// The build is incremental: `npm ci` builds once (the `prepare` script), and `npm start` and every
// CLI run it first, where it costs a scan of modification times when nothing changed. It writes only
// the files whose source changed, each by a rename, and never empties dist/: a service may be
// running from it. `--force` compiles everything again.
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const STAMP = '.build-stamp';
const BUILD_INPUTS = ['.swcrc', fileURLToPath(import.meta.url)];

const isSource = (name) => name.endsWith('.ts') && !name.endsWith('.d.ts') && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(name);

/** Every source file (tests excluded) under `dir`, and the newest modification time of a file or folder seen. */
async function scan(dir, found) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  // A folder's time changes when a file in it is added, removed or renamed.
  // The stat first: \`Math.max(found.newestMs, await …)\` would read newestMs before the await and
  // put back a stale maximum over what the other folders' scans found meanwhile.
  const folderMs = (await stat(dir)).mtimeMs;
  found.newestMs = Math.max(found.newestMs, folderMs);
  await Promise.all(
    entries.map(async (entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return scan(path, found);
      if (!isSource(entry.name)) return;
      const mtimeMs = (await stat(path)).mtimeMs;
      found.newestMs = Math.max(found.newestMs, mtimeMs);
      found.files.push({ path, mtimeMs });
    }),
  );
}

async function mtimeMs(path) {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Compiled files under `outDir` whose source is gone. */
async function* leftovers(outDir, dir, sources) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* leftovers(outDir, path, sources);
    else if (/\.js(\.map)?$/.test(entry.name) && !sources.has(relative(outDir, path).replace(/\.js(\.map)?$/, '.ts'))) yield path;
  }
}

/** Writes by a rename, so that a process reading dist/ meanwhile sees the old file or the new one. */
async function writeAtomically(path, content) {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, path);
}

/**
 * Compiles the sources under `roots` into `outDir` whose output is missing or older than its source,
 * removes the output of deleted sources, and answers the number of files compiled. When no source,
 * folder or build input is newer than the last build's stamp it answers 0 after the scan alone.
 */
export async function compileTree(roots, outDir, { force = false } = {}) {
  const startedMs = Date.now();
  const found = { files: [], newestMs: 0 };
  for (const root of roots) await scan(root, found);
  const inputsMs = Math.max(...(await Promise.all(BUILD_INPUTS.map(async (path) => (await mtimeMs(path)) ?? 0))));
  const stampMs = await mtimeMs(join(outDir, STAMP));
  const rebuildAll = force || stampMs === undefined || inputsMs > stampMs;
  if (!rebuildAll && found.newestMs <= stampMs) return 0;

  const { transformFile } = await import('@swc/core');
  const options = JSON.parse(await readFile('.swcrc', 'utf8'));
  let count = 0;
  for (const file of found.files) {
    const target = join(outDir, file.path.replace(/\.ts$/, '.js'));
    if (!rebuildAll && ((await mtimeMs(target)) ?? -1) >= file.mtimeMs) continue;
    const { code, map } = await transformFile(file.path, { ...options, swcrc: false, filename: file.path, sourceFileName: relative(dirname(target), file.path) });
    await mkdir(dirname(target), { recursive: true });
    if (map) await writeAtomically(`${target}.map`, map);
    await writeAtomically(target, `${code}\n//# sourceMappingURL=${target.split('/').pop()}.map\n`);
    count++;
  }
  const sources = new Set(found.files.map((file) => file.path));
  for (const root of roots) for await (const stale of leftovers(outDir, join(outDir, root), sources)) await rm(stale, { force: true });
  // The stamp carries the time the build began: a source saved during the build is newer, so built next time.
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, STAMP), '');
  await utimes(join(outDir, STAMP), startedMs / 1_000, startedMs / 1_000);
  return count;
}

/** The newest modification time of a file or folder under `path` (0 when it does not exist). */
async function newestMs(path) {
  let info;
  try {
    info = await stat(path);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path);
  return Math.max(info.mtimeMs, ...(await Promise.all(entries.map((entry) => newestMs(join(path, entry))))));
}

/**
 * Builds the console (console/, a Vite single-page app) into dist/console (or `app`, the hosted
 * page's widget/, into dist/widget) when a file of it, the
 * lock file (a library's version) or this script changed since the last console build, and answers
 * whether it built. A tree without console/ (the build's own test) has nothing to build.
 */
export async function buildConsole({ force = false, app = 'console' } = {}) {
  const stamp = join('dist', app, STAMP);
  const inputsMs = Math.max(await newestMs(app), await newestMs('package-lock.json'), await newestMs(fileURLToPath(import.meta.url)));
  if (inputsMs === 0 || (await mtimeMs(`${app}/vite.config.ts`)) === undefined) return false;
  const stampMs = await mtimeMs(stamp);
  if (!force && stampMs !== undefined && inputsMs <= stampMs) return false;
  const startedMs = Date.now();
  const { build } = await import('vite');
  await build({ configFile: `${app}/vite.config.ts`, logLevel: 'warn' });
  await writeFile(stamp, '');
  await utimes(stamp, startedMs / 1_000, startedMs / 1_000);
  return true;
}

const force = process.argv.includes('--force');
const count = await compileTree(['src', 'projections', 'bench', 'chaos'], 'dist', { force });
if (count > 0) process.stderr.write(`built ${count} files into dist/\n`);
if (await buildConsole({ force })) process.stderr.write('built the console into dist/console/\n');
// The hosted verification page (widget/), the same way.
if (await buildConsole({ force, app: 'widget' })) process.stderr.write('built the hosted page into dist/widget/\n');
