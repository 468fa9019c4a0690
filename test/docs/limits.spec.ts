import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The documentation stays short enough for a newcomer to read in about an hour, and stands on its
 * own: it never sends the reader to notes kept outside the repository. The size limits are the
 * budget every change to the docs has to fit; the history of figures belongs in commit messages.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const README_MAX_CHARACTERS = 10_000;
/** 120 KB read as 120,000 bytes, the stricter reading. */
const DOCS_MAX_BYTES = 120_000;
const BENCHMARKS_MAX_CHARACTERS = 15_000;

// Built from pieces so that this file does not itself mention what it forbids.
const OUTSIDE_REFERENCES = [`..${'/'}shared`, `DESIGN${'.'}md`, `STYLE${'.'}md`];

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const characters = (text: string): number => [...text].length;
const docs = (): string[] =>
  readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);

describe('The size of the documentation', () => {
  it(`keeps README.md at most ${README_MAX_CHARACTERS} characters`, () => {
    expect(characters(read('README.md'))).toBeLessThanOrEqual(README_MAX_CHARACTERS);
  });

  it(`keeps docs/*.md together at most ${DOCS_MAX_BYTES} bytes`, () => {
    const sizes = docs().map((path) => Buffer.byteLength(read(path), 'utf8'));
    expect(sizes.length).toBeGreaterThan(0);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(DOCS_MAX_BYTES);
  });

  it(`keeps docs/benchmarks.md at most ${BENCHMARKS_MAX_CHARACTERS} characters`, () => {
    expect(characters(read('docs/benchmarks.md'))).toBeLessThanOrEqual(BENCHMARKS_MAX_CHARACTERS);
  });
});

/** Every text file of the repository (sources, tests, scripts, configuration and docs), without installed or built output. */
function repositoryTextFiles(): string[] {
  const skipped = new Set(['node_modules', 'dist', '.data', '.git', 'coverage']);
  const text = /\.(md|ts|tsx|js|mjs|cjs|json|ya?ml|sql|sh|html|css)$/;
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skipped.has(entry.name)) walk(path);
      } else if (text.test(entry.name) && statSync(join(ROOT, path)).size < 2_000_000) files.push(path);
    }
  };
  walk('');
  return files;
}

describe('References to documents outside the repository', () => {
  it('appear nowhere in the repository: not in the docs, the code, its comments or its tests', () => {
    const files = repositoryTextFiles();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'jest.config.js', 'test/docs/limits.spec.ts']));
    const mentions = files.flatMap((path) => {
      const text = read(path);
      return OUTSIDE_REFERENCES.filter((reference) => text.includes(reference)).map((reference) => `${path} mentions ${reference}`);
    });
    expect(mentions).toEqual([]);
  });
});

/**
 * A measured figure, a rate ("N events/s", "N requests/s") or a ratio ("0.7×", "4× faster"), means
 * little without the machine it was measured on. Outside docs/benchmarks.md, whose table gives every
 * row its machine, a paragraph (or table row) quoting one names a machine or links to that table.
 * Settings ("CHAOS_RATE (9/s)") carry no unit word and a product ("× 1,000,000") no digit before the
 * sign, so neither is taken for a figure.
 */
const MEASURED_FIGURE = /\d[\d,.]*\s?(?:events|requests|req|calls|checks|erasures|rows|statements)\/s\b|\d(?:[.,]\d+)?\s?×(?!\s?\d)/;
const MACHINE_REFERENCE = /benchmarks\.md|\bmachine\b|\d-core|\bEPYC\b|\bXeon\b|\bApple M\d/i;

/** Paragraphs of a Markdown text, each table row on its own; fenced code left out. */
function paragraphs(text: string): string[] {
  const withoutCode = text.replace(/^```[\s\S]*?^```/gm, '');
  return withoutCode.split(/\n\s*\n/).flatMap((block) => (block.trimStart().startsWith('|') ? block.split('\n') : [block]));
}

describe('Figures in the docs', () => {
  it('name their machine, or point to the benchmarks table, wherever a rate or a ratio is quoted', () => {
    const files = [...docs().filter((path) => path !== 'docs/benchmarks.md'), 'README.md', 'CONTRIBUTING.md'];
    const unnamed = files.flatMap((path) =>
      paragraphs(read(path))
        .filter((paragraph) => MEASURED_FIGURE.test(paragraph) && !MACHINE_REFERENCE.test(paragraph))
        .map((paragraph) => `${path}: ${paragraph.match(MEASURED_FIGURE)?.[0]} in "${paragraph.slice(0, 80)}…"`),
    );
    expect(unnamed).toEqual([]);
  });
});
