import { adjacency, type Arrow, type Cycle, findCycles, isTestFile } from './import-graph.js';

/*
 * Which way imports may point, checked by import-rules.spec.ts over every import of src/ and projections/
 * (type-only imports and dynamic import() included):
 *
 * 1. Foundation (the folders below) imports no feature folder of src/, nothing of projections/ and none
 *    of the wiring. Injection tokens live with what they name (CONFIG and RUNTIME in src/config/,
 *    PG_POOL in src/database/).
 * 2. The wiring (src/app.module.ts, main.ts, app.factory.ts, core.module.ts, openapi.ts: every file
 *    directly under src/) is imported only by the wiring and the command-line entry points.
 * 3. src/ never imports projections/, except the wiring and the entry points, which compose everything.
 *    What the API needs of the read side lives in foundation (src/read-models/: the projection waiter;
 *    src/database/migrations/: every migration) or in the feature that owns the read model
 *    (`*.read-model.ts`: its tables and queries).
 * 4. projections/ imports of a feature only its contracts: its events (`*.events.ts`), the
 *    read-model tables it fills (`*.read-model.ts`) and the pure rules over its events that its
 *    decider folds by too (`*.rule.ts`, which import no more of a feature than those contracts);
 *    never a controller, guard, handler, module or DTO.
 * 5. No feature imports another feature's DTOs (`*.dto.ts`); shared schemas and paging are in
 *    src/common/. The admin CLI, an entry point, reuses the organizations' input DTOs to validate its
 *    arguments exactly as the HTTP API validates bodies.
 * 6. No cycle between files, and none between folders: each first-level folder of src/ and
 *    projections/ is a node (src/wallets, projections/runner, …); the files directly under src/ and
 *    projections/ (the wiring, the projection list and the entry points) belong to no folder.
 * Tests (`*.spec.ts`, `*.int-spec.ts`, `*.e2e-spec.ts`) are leaves: rules 1 to 5 and the folder graph
 * leave them out, since they may reach whatever they exercise.
 */

/** Shared ground: imported by everything, importing nothing above it. src/scopes/ is the scope catalogue, with no imports of its own. */
export const FOUNDATION = [
  'src/common/',
  'src/config/',
  'src/data-protection/',
  'src/database/',
  'src/event-sourcing/',
  'src/event-store/',
  'src/logging/',
  'src/metrics/',
  'src/read-models/',
  'src/scopes/',
] as const;

/** Command-line entry points: they compose the application (or a part of it) like the wiring does. */
const ENTRY_POINTS = [/^src\/admin\/cli\.ts$/, /^src\/admin\/cli\//, /^src\/audit\/audit-cli\.ts$/, /^projections\/cli\.ts$/];

/** What projections/ may import of a feature: its events, the read-model tables it fills, and its rules over its events. */
const FEATURE_CONTRACT = /\.(events|read-model|rule)\.ts$/;

const isFoundation = (path: string): boolean => FOUNDATION.some((prefix) => path.startsWith(prefix));
/** The files directly under src/: app.module, main, app.factory, core.module, openapi. */
const isWiring = (path: string): boolean => path.startsWith('src/') && path.split('/').length === 2;
const isEntryPoint = (path: string): boolean => ENTRY_POINTS.some((pattern) => pattern.test(path));
const isProjections = (path: string): boolean => path.startsWith('projections/');
const isFeature = (path: string): boolean => path.startsWith('src/') && !isFoundation(path) && !isWiring(path);

/** `src/wallets/x.ts` -> `src/wallets`; files directly under src/ or projections/ belong to no folder. */
export function folderOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : undefined;
}

/** The arrows that break rules 1 to 5, each as `rule: from -> to`. */
export function layerViolations(arrows: readonly Arrow[]): string[] {
  const found: string[] = [];
  for (const { from, to } of arrows) {
    if (isTestFile(from)) continue;
    const flag = (rule: string) => found.push(`${rule}: ${from} -> ${to}`);
    const composes = isWiring(from) || isEntryPoint(from);
    if (isFoundation(from) && (isFeature(to) || isProjections(to) || isWiring(to))) flag('foundation imports a feature, projections/ or the wiring');
    else if (isWiring(to) && !composes) flag('only the wiring and the entry points import the wiring');
    else if (from.startsWith('src/') && isProjections(to) && !composes) flag('src/ imports projections/');
    if (isProjections(from) && isFeature(to) && !isEntryPoint(from) && !FEATURE_CONTRACT.test(to))
      flag('projections/ imports a feature file that is not *.events.ts, *.read-model.ts or *.rule.ts');
    if (from.endsWith('.rule.ts') && isFeature(to) && !FEATURE_CONTRACT.test(to)) flag('a *.rule.ts imports a feature file that is not *.events.ts, *.read-model.ts or *.rule.ts');
    if (isFeature(from) && isFeature(to) && to.endsWith('.dto.ts') && folderOf(from) !== folderOf(to) && !isEntryPoint(from)) flag("a feature imports another feature's DTOs");
  }
  return found;
}

/** How many file arrows a report shows per step of a folder cycle. */
const WITNESSES_PER_STEP = 5;

function describeCycle(kind: string, cycle: Cycle): string {
  const among = cycle.members.length > cycle.path.length - 1 ? ` (one of the cycles among ${cycle.members.join(', ')})` : '';
  return `${kind} cycle: ${cycle.path.join(' -> ')}${among}`;
}

/** Cycles between files: for each tangle, a shortest path around it and every file in it. */
export function fileCycles(arrows: readonly Arrow[]): string[] {
  return findCycles(adjacency(arrows)).map((cycle) => describeCycle('file', cycle));
}

/** Cycles between folders, each with the file arrows that make its steps. */
export function folderCycles(arrows: readonly Arrow[]): string[] {
  const folderArrows: Arrow[] = [];
  const witnesses = new Map<string, string[]>();
  for (const { from, to } of arrows) {
    if (isTestFile(from)) continue;
    const source = folderOf(from);
    const target = folderOf(to);
    if (source === undefined || target === undefined || source === target) continue;
    folderArrows.push({ from: source, to: target });
    const step = `${source} -> ${target}`;
    witnesses.set(step, [...(witnesses.get(step) ?? []), `${from} -> ${to}`]);
  }
  return findCycles(adjacency(folderArrows)).map((cycle) => {
    const steps = cycle.path.slice(1).map((to, i) => {
      const arrows = witnesses.get(`${cycle.path[i]} -> ${to}`) ?? [];
      const more = arrows.length > WITNESSES_PER_STEP ? `\n    … and ${arrows.length - WITNESSES_PER_STEP} more` : '';
      return (
        arrows
          .slice(0, WITNESSES_PER_STEP)
          .map((arrow) => `\n    ${arrow}`)
          .join('') + more
      );
    });
    return describeCycle('folder', cycle) + steps.join('');
  });
}
