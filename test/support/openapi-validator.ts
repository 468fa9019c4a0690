import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Checks real answers against the OpenAPI document (openapi/openapi.json, kept fresh by
 * test/docs/openapi.spec.ts): the operation the request went to must document the status, the
 * content type must be one it documents, and a JSON body must match its schema, validated by Ajv
 * (JSON Schema 2020-12, OpenAPI 3.1's dialect) with formats. Object schemas that list their
 * properties are closed here (`additionalProperties: false` unless they say otherwise): the
 * document stays open for clients, but an answer carrying a field the document does not name
 * fails the tests.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Operation {
  readonly operationId: string;
  readonly responses: Record<string, JsonObject>;
}

interface Route {
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly params: number;
  readonly operation: Operation;
}

export interface Answer {
  readonly method: string;
  /** Path and query as sent. */
  readonly url: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
  /** The answer's header names (any case); those of DECLARED_HEADERS among them must be declared on the response. */
  readonly headers?: readonly string[];
}

/** Headers the document declares where they occur: an answer carrying one its response does not declare fails. */
const DECLARED_HEADERS = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'x-consistency-token'];

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const OPENAPI_FILE = join(ROOT, 'openapi', 'openapi.json');
/** The console's own document (/console/api), kept fresh by test/docs/console-openapi.spec.ts. */
export const CONSOLE_OPENAPI_FILE = join(ROOT, 'openapi', 'console.json');
const BASE = 'openapi.json';

function rewriteRefs(node: Json): Json {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) out[key] = key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${BASE}${value}` : rewriteRefs(value);
  return out;
}

/** `additionalProperties: false` on every object schema that lists its properties and says nothing of others. */
function close(node: Json): Json {
  if (Array.isArray(node)) return node.map(close);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node))
    out[key] =
      key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, close(schema)]))
        : close(value);
  if ('properties' in node && !('additionalProperties' in node) && !('patternProperties' in node)) out.additionalProperties = false;
  return out;
}

export class OpenApiValidator {
  readonly document: JsonObject;
  private readonly routes: Route[] = [];
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** `operationId status` of every answer checked. */
  readonly covered = new Set<string>();

  constructor(document: JsonObject = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as JsonObject) {
    this.document = document;
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as (ajv: Ajv2020) => void;
    addFormats(this.ajv);
    const components = (document.components ?? {}) as JsonObject;
    this.ajv.addSchema({ $id: BASE, components: { schemas: close(components.schemas ?? {}) } } as never);
    for (const [template, item] of Object.entries(document.paths as unknown as Record<string, Record<string, Operation>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const params = (template.match(/\{[^}]+\}/g) ?? []).length;
        const source = template
          .split(/\{[^}]+\}/)
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]+');
        this.routes.push({ method: method.toUpperCase(), template, pattern: new RegExp(`^${source}$`), params, operation });
      }
    }
    // Literal paths before templated ones: /v1/nin before anything with a parameter.
    this.routes.sort((a, b) => a.params - b.params);
  }

  /** The operation a request goes to, if the document has it. */
  operation(method: string, url: string): Route | undefined {
    const path = url.split('?')[0];
    const wanted = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    return this.routes.find((route) => route.method === wanted && route.pattern.test(path));
  }

  operations(): readonly Route[] {
    return this.routes;
  }

  private response(reference: JsonObject): JsonObject {
    const ref = reference.$ref;
    if (typeof ref !== 'string') return reference;
    const name = ref.split('/').pop() as string;
    return ((this.document.components as JsonObject).responses as JsonObject)[name] as JsonObject;
  }

  /** What is wrong with an answer, as sentences; empty when it matches the document. */
  check(answer: Answer, options: { unknownOperation?: 'problem' | 'ignore' } = {}): string[] {
    const route = this.operation(answer.method, answer.url);
    const where = `${answer.method} ${answer.url.slice(0, 120)} -> ${answer.status}`;
    if (route === undefined) return options.unknownOperation === 'ignore' ? [] : [`${where}: no operation of the document matches the request`];
    const problems: string[] = [];
    // A range (`4XX`) stands for every status of it the operation does not list (the console's document).
    const documented = route.operation.responses[String(answer.status)] ?? route.operation.responses[`${String(answer.status)[0]}XX`];
    if (documented === undefined) return [...problems, `${where}: status ${answer.status} is not documented for ${route.operation.operationId}`];
    this.covered.add(`${route.operation.operationId} ${answer.status}`);
    const declared = Object.keys((this.response(documented).headers ?? {}) as JsonObject).map((name) => name.toLowerCase());
    for (const name of answer.headers ?? []) {
      const lower = name.toLowerCase();
      if (DECLARED_HEADERS.includes(lower) && !declared.includes(lower))
        problems.push(`${where}: the header ${lower} is not declared on ${route.operation.operationId} ${answer.status}`);
    }
    if (answer.method.toUpperCase() === 'HEAD') return problems;
    const content = (this.response(documented).content ?? {}) as Record<string, JsonObject>;
    // A response documented without content (204) matches an empty answer.
    if (Object.keys(content).length === 0 && answer.text === '') return problems;
    const mediaType = (answer.contentType ?? '').split(';')[0].trim().toLowerCase();
    const media = content[mediaType];
    if (media === undefined)
      return [...problems, `${where}: content type ${JSON.stringify(answer.contentType)} is not documented (${Object.keys(content).join(', ') || 'no body'})`];
    if (mediaType !== 'application/json') return problems;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...problems, `${where}: the body is not JSON: ${answer.text.slice(0, 200)}`];
    }
    const key = `${route.operation.operationId} ${answer.status}`;
    let validate = this.compiled.get(key);
    if (validate === undefined) {
      validate = this.ajv.compile(close(rewriteRefs(media.schema ?? {})) as never);
      this.compiled.set(key, validate);
    }
    if (!validate(body)) {
      const errors = (validate.errors ?? []).slice(0, 8).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
      problems.push(
        `${where}: the body does not match the schema of ${route.operation.operationId} ${answer.status}:\n  ${errors.join('\n  ')}\n  body: ${answer.text.slice(0, 600)}`,
      );
    }
    return problems;
  }

  /** What is wrong with a JSON request body for the operation at `template` (as the document names it): empty when it matches the body's schema. */
  checkRequestBody(method: string, template: string, body: unknown): string[] {
    const route = this.routes.find((candidate) => candidate.method === method.toUpperCase() && candidate.template === template);
    const where = `${method.toUpperCase()} ${template} request`;
    if (route === undefined) return [`${where}: no such operation`];
    const media = ((route.operation as unknown as { requestBody?: { content?: Record<string, JsonObject> } }).requestBody?.content ?? {})['application/json'];
    if (media === undefined) return [`${where}: takes no JSON body`];
    const key = `${route.operation.operationId} request`;
    let validate = this.compiled.get(key);
    if (validate === undefined) {
      validate = this.ajv.compile(close(rewriteRefs(media.schema ?? {})) as never);
      this.compiled.set(key, validate);
    }
    if (validate(body)) return [];
    return [
      `${where}: ${JSON.stringify(body).slice(0, 300)} does not match the schema: ${(validate.errors ?? [])
        .slice(0, 5)
        .map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`)
        .join('; ')}`,
    ];
  }

  /** `operationId status` pairs the document has and no checked answer showed. */
  uncovered(): string[] {
    const all = this.routes.flatMap((route) => Object.keys(route.operation.responses).map((status) => `${route.operation.operationId} ${status}`));
    return all.filter((pair) => !this.covered.has(pair));
  }
}

let shared: OpenApiValidator | undefined;

/** One validator per test file (its compiled schemas are reused). */
export function openApiValidator(): OpenApiValidator {
  shared ??= new OpenApiValidator();
  return shared;
}

let sharedConsole: OpenApiValidator | undefined;

/** The console document's validator, one per test file. */
export function consoleOpenApiValidator(): OpenApiValidator {
  sharedConsole ??= new OpenApiValidator(JSON.parse(readFileSync(CONSOLE_OPENAPI_FILE, 'utf8')) as JsonObject);
  return sharedConsole;
}
