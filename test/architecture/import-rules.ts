import { adjacency, type Arrow, findCycles, isTestFile } from './import-graph.js';

/** Shared ground: may be imported by everything, imports nothing above it. */
export const FOUNDATION = [
  'src/common/',
  'src/config/',
  'src/event-store/',
  'src/event-sourcing/',
  'src/database/',
  'src/read-models/',
  'src/logging/',
  'src/metrics/',
] as const;

/** Composition: the files that put every feature and the projections together into one process. */
const WIRING_FILES = new Set(['src/app.module.ts', 'src/main.ts', 'src/app.factory.ts', 'src/core.module.ts', 'src/openapi.ts']);

/** Command-line entry points: they compose the application (or a part of it) like the wiring does. */
const ENTRY_POINTS = [/^src\/admin\/cli\.ts$/, /^src\/admin\/cli\//, /^src\/audit\/audit-cli\.ts$/, /^projections\/cli\.ts$/];

/** What projections/ may read of a feature: its events and the read-model tables it owns. */
const FEATURE_CONTRACT = /\.(events|read-model)\.ts$/;

export const isFoundation = (path: string): boolean => FOUNDATION.some((prefix) => path.startsWith(prefix));
const isWiring = (path: string): boolean => WIRING_FILES.has(path) || (path.startsWith('src/') && path.split('/').length === 2);
const isEntryPoint = (path: string): boolean => ENTRY_POINTS.some((pattern) => pattern.test(path));
const isProjections = (path: string): boolean => path.startsWith('projections/');
const isFeature = (path: string): boolean => path.startsWith('src/') && !isFoundation(path) && !isWiring(path);
/** `src/wallets/x.ts` -> `src/wallets`; files directly under src/ or projections/ belong to no folder. */
export const folderOf = (path: string): string | undefined => {
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : undefined;
};

export interface Violation {
  readonly rule: string;
  readonly arrow: string;
}

/** The arrows that break a layering rule. Tests are leaves (nothing imports them) and may reach anything they exercise. */
export function layerViolations(arrows: readonly Arrow[]): Violation[] {
  const found: Violation[] = [];
  const flag = (rule: string, { from, to }: Arrow) => found.push({ rule, arrow: `${from} -> ${to}` });
  for (const arrow of arrows) {
    const { from, to } = arrow;
    if (isTestFile(from)) continue;
    if (isFoundation(from) && (isFeature(to) || isProjections(to) || isWiring(to))) flag('foundation imports a feature, projections/ or the wiring', arrow);
    if (isWiring(to) && !isWiring(from) && !isEntryPoint(from)) flag('only the wiring and the entry points import the wiring', arrow);
    if (from.startsWith('src/') && isProjections(to) && !isWiring(from) && !isEntryPoint(from)) flag('src/ imports projections/', arrow);
    if (isProjections(from) && isFeature(to) && !isEntryPoint(from) && !FEATURE_CONTRACT.test(to)) flag('projections/ imports a feature file that is not *.events.ts or *.read-model.ts', arrow);
    if (to.endsWith('.dto.ts') && folderOf(from) !== folderOf(to)) flag("a feature imports another feature's DTOs", arrow);
  }
  return found;
}

/** Cycles between files, each as the path around it. */
export function fileCycles(arrows: readonly Arrow[]): string[][] {
  return findCycles(adjacency(arrows));
}

/** Cycles between the folders of src/ and projections/ (each first-level folder one node), tests left out. */
export function folderCycles(arrows: readonly Arrow[]): { cycle: string[]; arrows: string[] }[] {
  const folderArrows: Arrow[] = [];
  const witnesses = new Map<string, string[]>();
  for (const { from, to } of arrows) {
    if (isTestFile(from)) continue;
    const source = folderOf(from);
    const target = folderOf(to);
    if (source === undefined || target === undefined || source === target) continue;
    folderArrows.push({ from: source, to: target });
    const key = `${source} -> ${target}`;
    witnesses.set(key, [...(witnesses.get(key) ?? []), `${from} -> ${to}`]);
  }
  return findCycles(adjacency(folderArrows)).map((cycle) => ({
    cycle,
    arrows: cycle.slice(1).flatMap((to, i) => witnesses.get(`${cycle[i]} -> ${to}`) ?? []),
  }));
}
