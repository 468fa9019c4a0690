import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, dirname, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import of one source file: both ends as paths from the repository root, with `/` separators. */
export interface Arrow {
  readonly from: string;
  readonly to: string;
}

const TEST_FILE = /\.(spec|int-spec|e2e-spec)\.ts$/;

export function isTestFile(path: string): boolean {
  return TEST_FILE.test(path);
}

function* walk(root: string, dir: string): Generator<string> {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) yield* walk(root, path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/**
 * Every relative import, re-export and dynamic import() between the TypeScript files under `dirs`,
 * type-only ones included (a type is a dependency on the module that owns it). Specifiers name the
 * compiled `.js` file (NodeNext), so `x.js` resolves to `x.ts`.
 */
export function readImportGraph(root: string, dirs: readonly string[]): Arrow[] {
  const arrows: Arrow[] = [];
  for (const dir of dirs) {
    for (const file of walk(root, dir)) {
      const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
      for (const { fileName } of info.importedFiles) {
        if (!fileName.startsWith('.')) continue;
        const absolute = resolve(root, dirname(file), fileName);
        const candidates = [absolute.replace(/\.js$/, '.ts'), `${absolute}.ts`, join(absolute, 'index.ts')];
        const target = candidates.find((candidate) => existsSync(candidate));
        if (target === undefined) throw new Error(`${file} imports ${fileName}, which does not resolve to a TypeScript file`);
        arrows.push({ from: file, to: relative(root, target).split(sep).join('/') });
      }
    }
  }
  return arrows;
}

/** A cycle found: every node of one strongly connected component, and a shortest path around it. */
export interface Cycle {
  readonly members: readonly string[];
  /** Starts and ends on the same node: `[a, b, a]`. */
  readonly path: readonly string[];
}

/** The cycles of a directed graph: one per strongly connected component with more than one node (or a self-arrow). */
export function findCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): Cycle[] {
  // Tarjan's algorithm; recursion is fine on a graph of a few hundred nodes.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || edges.get(node)?.has(node)) components.push(component.sort());
    }
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!)).map((members) => ({ members, path: shortestCycle(members, edges) }));
}

/** The shortest closed path through any member (the first in sort order among equals), by breadth-first search from each. */
function shortestCycle(members: readonly string[], edges: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const inside = new Set(members);
  let best: string[] | undefined;
  for (const start of members) {
    const previous = new Map<string, string>();
    const queue = [start];
    search: for (let head = 0; head < queue.length; head++) {
      const node = queue[head]!;
      for (const next of [...(edges.get(node) ?? [])].sort()) {
        if (!inside.has(next)) continue;
        if (next === start) {
          const path = [start];
          for (let back = node; back !== start; back = previous.get(back)!) path.splice(1, 0, back);
          path.push(start);
          if (best === undefined || path.length < best.length) best = path;
          break search;
        }
        if (previous.has(next)) continue;
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  if (best === undefined) throw new Error(`no cycle through ${members.join(', ')}`);
  return best;
}

export function adjacency(arrows: Iterable<Arrow>): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const { from, to } of arrows) {
    if (!edges.has(from)) edges.set(from, new Set());
    if (!edges.has(to)) edges.set(to, new Set());
    edges.get(from)!.add(to);
  }
  return edges;
}
