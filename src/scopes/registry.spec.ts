import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCOPES, scopeDefinition, type Scope } from './registry.js';
import type { ScopeDefinition } from './scope-definition.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The scope definitions each file of registry/ exports (what `defineScope` returns: a name, inputs and results). */
async function definitionsIn(file: string): Promise<ScopeDefinition[]> {
  const module = (await import(`./registry/${file.replace(/\.ts$/, '.js')}`)) as Record<string, unknown>;
  return Object.values(module).filter(
    (value): value is ScopeDefinition => typeof value === 'object' && value !== null && 'name' in value && 'inputs' in value && 'results' in value,
  );
}

describe('The scope registry', () => {
  // A scope is written once, in its own file; the one other line it needs is BUILT_IN's, which this
  // holds to the folder so that a file left out of it fails here rather than going unserved.
  it('registers every definition in src/scopes/registry/, and nothing else', async () => {
    const files = readdirSync(join(HERE, 'registry')).filter((name) => name.endsWith('.ts') && !/\.(spec|testing)\.ts$/.test(name));
    const defined = (await Promise.all(files.map(definitionsIn))).flat();
    expect(defined.length).toBe(files.length);
    expect(defined.map((definition) => definition.name).sort()).toEqual([...SCOPES].sort());
    for (const definition of defined) expect(scopeDefinition(definition.name as Scope)).toBe(definition);
  });

  // README.md lists the scopes beside POST /v1/{scope}; the list is the registry's, in its order.
  it("is the list README.md gives for POST /v1/{scope}, in the registry's order", () => {
    const readme = readFileSync(join(HERE, '..', '..', 'README.md'), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| `POST /v1/{scope}` |'));
    expect(row).toBeDefined();
    const listed = [...(row ?? '').split('|')[2].matchAll(/`([a-z_]+)`/g)].map((match) => match[1]);
    expect(listed).toEqual([...SCOPES]);
  });
});
