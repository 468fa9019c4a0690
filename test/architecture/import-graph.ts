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

/** The cycles of a directed graph: each strongly connected component with more than one node (or a self-arrow), as one path around it. */
export function findCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  // Tarjan's algorithm, iterative only in spirit: the graph has a few hundred nodes, so recursion is fine.
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
      if (component.length > 1 || edges.get(node)?.has(node)) components.push(component);
    }
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => cycleThrough(component, edges));
}

/** One closed walk through every node of a strongly connected component, so the report shows real arrows. */
function cycleThrough(component: readonly string[], edges: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const path = [start];
  const seen = new Set([start]);
  // Walks to unseen members by shortest paths until all are visited, then back to the start.
  let current = start;
  while (seen.size < members.size || current !== start || path.length === 1) {
    const goal = seen.size < members.size ? (node: string) => !seen.has(node) : (node: string) => node === start;
    const step = shortestPath(current, goal, members, edges);
    for (const node of step) {
      path.push(node);
      seen.add(node);
    }
    current = path[path.length - 1]!;
    if (current === start) break;
  }
  return path;
}

function shortestPath(from: string, goal: (node: string) => boolean, members: ReadonlySet<string>, edges: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const previous = new Map<string, string>();
  const queue = [from];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const next of [...(edges.get(node) ?? [])].sort()) {
      if (!members.has(next) || previous.has(next)) continue;
      previous.set(next, node);
      if (goal(next)) {
        const path = [next];
        for (let back = node; back !== from; back = previous.get(back)!) path.unshift(back);
        return path;
      }
      queue.push(next);
    }
  }
  throw new Error(`no path from ${from} inside its own strongly connected component`);
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
