import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateOpenApiDocument, openApiJson } from '../../src/openapi.js';
import { redoclyLint } from '../support/redocly-lint.js';
import { OpenApiValidator } from '../support/openapi-validator.js';

/**
 * The OpenAPI document: the committed openapi/openapi.json is what the code generates
 * (`npm run openapi` writes it), and `redocly lint` with the recommended rules (redocly.yaml)
 * finds neither an error nor a warning in it.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const COMMITTED = join(ROOT, 'openapi', 'openapi.json');
const run = promisify(execFile);

describe('The OpenAPI document', () => {
  it('is committed as the code generates it (npm run openapi)', async () => {
    const generated = openApiJson(await generateOpenApiDocument());
    const committed = await readFile(COMMITTED, 'utf8').catch(() => '');
    if (committed !== generated) throw new Error('openapi/openapi.json is out of date: run `npm run openapi` and commit the file');
    expect(committed).toBe(generated);
  });

  it('passes redocly lint with the recommended rules: no error, no warning', async () => {
    // Linted as generated, so that a stale committed file does not hide a problem of the code's document.
    const report = await redoclyLint(openApiJson(await generateOpenApiDocument()), 'openapi.json');
    expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('is what the TypeScript client was generated from (npm run client:generate)', async () => {
    const result = await run(process.execPath, [join(ROOT, 'scripts', 'generate-types.mjs'), 'public', '--check'], { cwd: ROOT }).catch((error: { stderr?: string }) => ({
      stdout: '',
      stderr: error.stderr ?? 'failed',
    }));
    expect(result.stderr).toBe('');
  });

  it('has one operation per scope, every operation named, tagged, secured and answering errors in the envelope', async () => {
    const document = (await generateOpenApiDocument()) as unknown as {
      paths: Record<
        string,
        Record<
          string,
          { operationId: string; security: unknown[]; responses: Record<string, { $ref?: string; content?: Record<string, { schema: { $ref?: string; anyOf?: unknown[] } }> }> }
        >
      >;
      components: { schemas: Record<string, unknown>; responses: Record<string, { content: Record<string, { schema: { $ref?: string; anyOf?: unknown[] } }> }> };
    };
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const scope of ['nin', 'pnv', 'vnin', 'bvn', 'pvc', 'passport', 'bank_account', 'premium_bank_account', 'phone', 'face_match']) {
      expect(document.paths[`/v1/${scope}`]?.post).toBeDefined();
    }
    expect(document.paths['/v1/{scope}']).toBeUndefined();
    for (const { path, method, operation } of operations) {
      const keyed = path.startsWith('/v1/') && !['/v1/health', '/v1/portraits/{id}'].includes(path);
      const admin = path.startsWith('/admin/');
      expect({ path, method, security: operation.security }).toEqual({ path, method, security: keyed ? [{ serviceKey: [] }] : admin ? [{ adminToken: [] }] : [] });
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const resolved = response.$ref === undefined ? response : document.components.responses[response.$ref.split('/').pop() as string];
        const schema = resolved.content?.['application/json']?.schema;
        const refs = schema?.$ref !== undefined ? [schema.$ref] : ((schema?.anyOf ?? []) as { $ref: string }[]).map((item) => item.$ref);
        expect({ path, method, status, inEnvelope: refs.length > 0 || path === '/health/ready' }).toEqual({ path, method, status, inEnvelope: true });
        // The readiness 503 also has its own schema (details.checks), beside the shared envelope.
        for (const ref of refs.filter((item) => item !== undefined || path !== '/health/ready')) expect(ref).toMatch(/^#\/components\/schemas\/\w+Error$/);
      }
    }
  });

  it('declares the headers its answers carry: X-Request-Id on every one, the rate-limit headers and the consistency token on keyed answers but 401, Retry-After on 429 and 503', async () => {
    const document = (await generateOpenApiDocument()) as unknown as {
      paths: Record<string, Record<string, { security: Record<string, unknown>[]; responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }> }>>;
      components: { responses: Record<string, { headers?: Record<string, unknown> }> };
    };
    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const keyed = operation.security.some((requirement) => 'serviceKey' in requirement);
        for (const [status, response] of Object.entries(operation.responses)) {
          const resolved = response.$ref === undefined ? response : document.components.responses[response.$ref.split('/').pop() as string];
          const names = Object.keys(resolved.headers ?? {});
          const wanted = ['X-Request-Id'];
          if (keyed && status !== '401') wanted.push('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Consistency-Token');
          if (status === '429' || status === '503') wanted.push('Retry-After');
          for (const name of wanted) if (!names.includes(name)) missing.push(`${method.toUpperCase()} ${path} ${status}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('gives every success answer an example, and each example matches its own schema', async () => {
    const document = (await generateOpenApiDocument()) as unknown as Record<string, unknown> & {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }> }> }>>;
    };
    const validator = new OpenApiValidator(JSON.parse(openApiJson(document as never)));
    const problems: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!status.startsWith('2')) continue;
          for (const [contentType, media] of Object.entries(response.content ?? {})) {
            const examples = media.example !== undefined ? [media.example] : Object.values(media.examples ?? {}).map((example) => example.value);
            if (examples.length === 0) problems.push(`${method.toUpperCase()} ${path} ${status} ${contentType}: no example`);
            if (contentType !== 'application/json') continue;
            for (const example of examples) {
              problems.push(...validator.check({ method, url: path, status: Number(status), contentType, text: JSON.stringify(example) }));
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("gives every request body examples, and each matches the body's schema (the e2e conformance test sends each to the server)", async () => {
    const document = JSON.parse(openApiJson(await generateOpenApiDocument())) as Record<string, unknown> & {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }> } }>>;
    };
    const validator = new OpenApiValidator(document as never);
    const problems: string[] = [];
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const media = operation.requestBody?.content['application/json'];
        if (operation.requestBody === undefined) continue;
        if (media === undefined) {
          problems.push(`${method.toUpperCase()} ${path}: a body that is not JSON`);
          continue;
        }
        const examples = media.example !== undefined ? [media.example] : Object.values(media.examples ?? {}).map((example) => example.value);
        if (examples.length === 0) problems.push(`${method.toUpperCase()} ${path}: no request example`);
        for (const example of examples) {
          checked += 1;
          problems.push(...validator.checkRequestBody(method, path, example));
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });
});
