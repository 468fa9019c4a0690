import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateOpenApiDocument, openApiJson } from '../../src/openapi.js';
import { redoclyLint } from '../support/redocly-lint.js';

/**
 * The console's OpenAPI document (/console/api): the committed openapi/console.json is what the
 * code generates, the console's types (console/src/api-schema.ts) are generated from it,
 * `redocly lint` finds nothing in it, and it stays apart from the integrators' document. That every answer the console e2e tests get matches it is checked by their client
 * (test/support/console-client.ts).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

describe("The console's OpenAPI document", () => {
  it('is committed as the code generates it (npm run openapi)', async () => {
    const generated = openApiJson(await generateOpenApiDocument('console'));
    const committed = await readFile(join(ROOT, 'openapi', 'console.json'), 'utf8').catch(() => '');
    if (committed !== generated) throw new Error('openapi/console.json is out of date: run `npm run openapi` and commit the file');
    expect(committed).toBe(generated);
  });

  it('has every /console/api operation, named and secured, and none of them is in the integrators document', async () => {
    const consoleDocument = (await generateOpenApiDocument('console')) as unknown as { paths: Record<string, Record<string, { operationId: string; security: unknown[] }>> };
    const integrators = JSON.parse(await readFile(join(ROOT, 'openapi', 'openapi.json'), 'utf8')) as { paths: Record<string, unknown> };
    const operations = Object.entries(consoleDocument.paths).flatMap(([path, item]) => Object.values(item).map((operation) => ({ path, operation })));
    expect(operations.length).toBeGreaterThan(80);
    expect(operations.every(({ path }) => path.startsWith('/console/api/'))).toBe(true);
    expect(operations.every(({ operation }) => operation.security.length === 1)).toBe(true);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(integrators.paths).filter((path) => path.startsWith('/console'))).toEqual([]);
  });

  it('is what the console types were generated from (npm run client:generate)', async () => {
    const result = await run(process.execPath, [join(ROOT, 'scripts', 'generate-types.mjs'), 'console', '--check'], { cwd: ROOT }).catch((error: { stderr?: string }) => ({
      stdout: '',
      stderr: error.stderr ?? 'failed',
    }));
    expect(result.stderr).toBe('');
  });

  it('passes redocly lint with the recommended rules: no error, no warning', async () => {
    const report = await redoclyLint(openApiJson(await generateOpenApiDocument('console')), 'console.json');
    expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });
});
