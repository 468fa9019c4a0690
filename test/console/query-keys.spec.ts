import { describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The console's cache is addressed by query keys, and TanStack Query invalidates by prefix: a key
 * of one feature that begins like another's is read again by the other's changes, and could even
 * hold the other's data. Each feature's key object (`<feature>Keys` in
 * console/src/features/<feature>/api.ts) is the one place its keys are written; here no first
 * element belongs to two features. (The modules are imported by a computed path, so that the
 * service's type check does not compile the console's browser code.)
 */
const FEATURES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'src', 'features');

type Key = readonly unknown[] | ((...args: never[]) => readonly unknown[]);

/** The first element of every key a feature writes (a key function is called with no arguments: its first element is a constant). */
async function prefixesOf(feature: string): Promise<string[]> {
  const module = (await import(`../../console/src/features/${feature}/api.js`)) as Record<string, unknown>;
  const keyObjects = Object.entries(module).filter(([name, value]) => name.endsWith('Keys') && typeof value === 'object') as [string, Record<string, Key>][];
  expect(keyObjects.map(([name]) => name)).toHaveLength(1);
  return Object.values(keyObjects[0][1]).map((key) => String((typeof key === 'function' ? (key as () => readonly unknown[])() : key)[0]));
}

describe("The console's query keys", () => {
  it('begin, feature by feature, with names no other feature uses', async () => {
    const features = readdirSync(FEATURES_DIR, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(features.length).toBeGreaterThan(10);
    const owners = new Map<string, Set<string>>();
    for (const feature of features) for (const prefix of await prefixesOf(feature)) owners.set(prefix, (owners.get(prefix) ?? new Set()).add(feature));
    const shared = [...owners].filter(([, owning]) => owning.size > 1).map(([prefix, owning]) => `${prefix}: ${[...owning].join(', ')}`);
    expect(shared).toEqual([]);
  });
});
