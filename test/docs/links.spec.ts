import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The documentation stands on its own: every relative link and image in README.md, CONTRIBUTING.md and docs/**
 * names a file of the repository (and a heading of it, for `#anchor`s into markdown), nothing
 * points at the shared notes outside the repository, and the README stays short.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
// The sibling folder of notes that is not part of the repository, spelt in pieces so this file does not mention it.
const OUTSIDE = `..${'/'}shared`;
const README_MAX_CHARACTERS = 10_000;

function markdownFiles(): string[] {
  const files = ['README.md', 'CONTRIBUTING.md'].filter((file) => existsSync(join(ROOT, file)));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(ROOT, 'docs'))) walk('docs');
  return files;
}

/** The text with fenced code blocks blanked (line count kept), so that code never counts as links or headings. */
export function withoutFences(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      return '';
    }
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      return '';
    }
    return line;
  });
}

/** GitHub's heading anchor: lower case, punctuation dropped (letters, digits, spaces, `-` and `_` kept), spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '')
    .replace(/\*+/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a markdown file offers: its headings' slugs (repeats get -1, -2, … as on GitHub) and explicit HTML ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const add = (heading: string) => {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  };
  const lines = withoutFences(text);
  lines.forEach((line, index) => {
    const atx = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx !== null) add(atx[1]);
    else if (index > 0 && /^\s{0,3}(=+|-+)\s*$/.test(line) && lines[index - 1].trim() !== '' && !/^\s*[|>*+-]/.test(lines[index - 1])) add(lines[index - 1]);
    for (const match of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  });
  return anchors;
}

export interface Link {
  readonly line: number;
  readonly target: string;
}

/** Inline links and images `[text](target)`, reference definitions `[ref]: target`, and HTML href/src, outside code. */
export function linksOf(text: string): Link[] {
  const links: Link[] = [];
  withoutFences(text).forEach((raw, index) => {
    const line = raw.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: index + 1, target: match[1] });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition !== null) links.push({ line: index + 1, target: definition[1] });
    for (const match of line.matchAll(/\s(?:href|src)="([^"]*)"/g)) links.push({ line: index + 1, target: match[1] });
  });
  return links;
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/** What is wrong with one link of `file` (a path from the repository root), or undefined when it holds. */
export function problemOf(file: string, target: string, read: (path: string) => string | undefined, isFile: (path: string) => boolean): string | undefined {
  if (target.includes(OUTSIDE) || target.includes(OUTSIDE.replace('/', '%2F'))) return `points at ${OUTSIDE}, which is not part of the repository`;
  if (target === '') return 'is empty';
  if (EXTERNAL.test(target) || target.startsWith('//')) return undefined;
  const hash = target.indexOf('#');
  const pathPart = (hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  let path = file;
  if (pathPart !== '') {
    const decoded = decodeURIComponent(pathPart);
    const absolute = decoded.startsWith('/') ? join(ROOT, decoded) : resolve(ROOT, dirname(file), decoded);
    const fromRoot = relative(ROOT, absolute);
    if (fromRoot.startsWith('..') || isAbsolute(fromRoot)) return 'leaves the repository';
    path = fromRoot.split(sep).join('/') || '.';
    if (!isFile(path)) return `names ${path}, which does not exist`;
  }
  if (anchor === undefined || anchor === '') return undefined;
  if (!path.endsWith('.md')) return undefined;
  const text = read(path);
  if (text === undefined) return `names ${path}, which cannot be read`;
  return anchorsOf(text).has(anchor) ? undefined : `names the anchor #${anchor}, which no heading of ${path} has`;
}

const readRepoFile = (path: string): string | undefined => {
  const absolute = join(ROOT, path);
  return existsSync(absolute) && statSync(absolute).isFile() ? readFileSync(absolute, 'utf8') : undefined;
};
const existsInRepo = (path: string): boolean => existsSync(join(ROOT, path));

describe('The documentation link checker', () => {
  it('makes GitHub heading anchors', () => {
    expect(slug('Code layout')).toBe('code-layout');
    expect(slug('`npm run bench:api`: the HTTP API')).toBe('npm-run-benchapi-the-http-api');
    expect(slug('Errors, codes & the envelope')).toBe('errors-codes--the-envelope');
    expect(slug('premium_bank_account')).toBe('premium_bank_account');
  });

  it('numbers repeated headings and ignores headings inside code blocks', () => {
    const anchors = anchorsOf('# Setup\n\n```md\n# Not a heading\n```\n\n## Setup\n');
    expect([...anchors].sort()).toEqual(['setup', 'setup-1']);
  });

  it('finds links and images but not the ones inside code', () => {
    const links = linksOf('See [a](docs/a.md#x) and ![b](img.png "title").\n`[c](nope.md)`\n```\n[d](nope.md)\n```\n[e]: ref.md\n');
    expect(links.map((link) => link.target)).toEqual(['docs/a.md#x', 'img.png', 'ref.md']);
  });

  it('reports a missing file, a missing anchor, the notes outside the repository and a path out of the repository', () => {
    const files: Record<string, string> = { 'docs/a.md': '# Title\n## Part two\n' };
    const read = (path: string) => files[path];
    const isFile = (path: string) => path in files;
    expect(problemOf('README.md', 'docs/a.md#part-two', read, isFile)).toBeUndefined();
    expect(problemOf('docs/b.md', 'a.md#title', read, isFile)).toBeUndefined();
    expect(problemOf('README.md', 'docs/missing.md', read, isFile)).toMatch(/does not exist/);
    expect(problemOf('README.md', 'docs/a.md#part-three', read, isFile)).toMatch(/no heading/);
    expect(problemOf('README.md', `${OUTSIDE}/notes.md`, read, isFile)).toMatch(/not part of the repository/);
    expect(problemOf('README.md', '../elsewhere.md', read, isFile)).toMatch(/leaves the repository/);
    expect(problemOf('README.md', 'https://www.rfc-editor.org/rfc/rfc8785', read, isFile)).toBeUndefined();
  });
});

describe('README.md and docs/', () => {
  const files = markdownFiles();

  it('are there', () => {
    expect(files).toContain('README.md');
    expect(files.filter((file) => file.startsWith('docs/')).length).toBeGreaterThan(0);
  });

  it('link only to files and headings that exist inside the repository', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const link of linksOf(text)) {
        const problem = problemOf(file, link.target, readRepoFile, existsInRepo);
        if (problem !== undefined) broken.push(`${file}:${link.line}: ${link.target} ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('never mention the notes outside the repository, linked or not', () => {
    const mentions = files.filter((file) => readFileSync(join(ROOT, file), 'utf8').includes(OUTSIDE));
    expect(mentions).toEqual([]);
  });

  it(`keep README.md at most ${README_MAX_CHARACTERS} characters`, () => {
    const characters = [...readFileSync(join(ROOT, 'README.md'), 'utf8')].length;
    expect(characters).toBeLessThanOrEqual(README_MAX_CHARACTERS);
  });
});

/** Every source file that may quote a doc to its reader: the service, the projections, the console, the scripts. */
function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(join(ROOT, dir))) return;
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(path);
      } else if (/\.(ts|tsx|mjs)$/.test(entry.name)) files.push(path);
    }
  };
  for (const dir of ['src', 'projections', 'console/src', 'scripts', 'bench', 'chaos']) walk(dir);
  return files;
}

describe('Sections of the docs that the code names', () => {
  it('exist: a message or comment that sends the reader to `docs/x.md, "Some section"` finds that text there', () => {
    const missing: string[] = [];
    for (const file of sourceFiles()) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/(docs\/[a-z-]+\.md), "([^"]+)"/g)) {
        const doc = readRepoFile(match[1]);
        if (doc === undefined || !doc.includes(match[2])) missing.push(`${file}: ${match[1]}, "${match[2]}"`);
      }
    }
    expect(missing).toEqual([]);
  });
});
