import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from './app.module.js';
import { projectionStatusSchemas } from '../projections/status/projection-status.openapi.js';
import { walletHistorySchemas } from './audit/wallet-history.openapi.js';
import { ANY_ROUTE_ERRORS, errorResponses, sharedResponses, sharedSchemas, TAGS, type Schema } from './common/openapi.js';
import { API_HELMET_OPTIONS, helmetHeaders } from './common/security-headers.js';
import { loadConfig } from './config/config.js';
import { organizationSchemas } from './organizations/organization.openapi.js';
import { scopeOperations, verificationSchemas } from './verifications/verification.openapi.js';
import { dataSubjectSchemas } from './verifications/data-subject.openapi.js';
import { CONSOLE_TAGS } from './common/console-route.js';
import { consoleSchemas } from './console/console.openapi.js';
import { SESSION_COOKIE } from './console-auth/sessions.js';
import { walletSchemas } from './wallets/wallet.openapi.js';
import { topUpLimitsSchemas } from './payments/topup-limits.openapi.js';
import { paystackKeySchemas } from './payments/paystack-key.openapi.js';
import { topUpOperationsSchemas } from './payments/topup-operations.openapi.js';
import { webhookSchemas } from './webhooks/webhook.openapi.js';
import { verificationFlowSchemas } from './verification-flows/verification-flows.openapi.js';
import type { FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Operations anyone may call: no key, no token (a portrait link is its own credential). */
const PUBLIC_OPERATIONS = new Set(['getHealth', 'getReadiness', 'getPortrait', 'getMetrics']);
const INTEGRATOR_TAGS: string[] = TAGS.filter((tag) => tag.audience === 'integrator').map((tag) => tag.name);
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Operation = { operationId?: string; summary?: string; tags?: string[]; security?: unknown[]; responses?: Record<string, unknown> };

/** `/metrics` is a Fastify route of its own (src/metrics/http-metrics.ts), outside Nest's scan. */
const METRICS_PATH_ITEM = {
  get: {
    operationId: 'getMetrics',
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description:
      'The Prometheus text format, without a key: keep it off the public network, or switch it off with METRICS_ENABLED=false (then 404). 503 only while the service shuts down.',
    responses: {
      '200': { description: 'The metrics', content: { 'text/plain': { schema: { type: 'string' } } } },
      ...errorResponses(ANY_ROUTE_ERRORS, 'not_found'),
    },
  },
};

const DESCRIPTION = [
  'Checks an individual against Nigerian registers and bills a kobo wallet per check; every fact is an event.',
  'Every answer is JSON in an envelope: `{status: true, data, meta?}` (`meta` on lists), or `{status: false, error: {code, message, details}}` for every error, whatever produced it. `code` is stable and meant for programs; each operation lists the codes it can answer.',
  'Integrators send `X-Service-Key` (`service_test_…` runs on the deterministic sandbox and the test wallet, `service_live_…` on the configured upstream and the live wallet). Operators send `Authorization: Bearer` with the admin token (or the read-only auditor token) on `/admin/v1`.',
  'References are `vrf_` + a 26-character ULID. Times are ISO 8601 with an explicit offset (`+00:00` in answers). Amounts are integers in kobo (₦1 = 100 kobo). Every answer carries `X-Request-Id`; keyed answers carry `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`.',
].join('\n\n');

/**
 * The OpenAPI 3.1 document, generated from the code: the controllers' decorators, the schemas each
 * feature declares (`*.openapi.ts`), and one operation per scope from the scope inputs' own rules.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Identity verification service')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    .addServer('/', 'The service that serves this document (at /docs/json); for a copy of it, the base URL of the deployment (its PUBLIC_BASE_URL)')
    .addSecurity('serviceKey', {
      type: 'apiKey',
      in: 'header',
      name: 'X-Service-Key',
      description: 'An API key of an organization: `service_test_…` or `service_live_…` (the prefix, then 43 base64url characters). Issued by an operator, shown once.',
    })
    .addSecurity('adminToken', {
      type: 'http',
      scheme: 'bearer',
      description: 'An opaque secret (not a JWT): ADMIN_TOKEN for operators, or AUDITOR_TOKEN, which may only read (403 `read_only` on anything else).',
    });
  for (const tag of TAGS) builder.addTag(tag.name, tag.description);
  const config = builder.build();
  const schemas: Record<string, Schema> = {
    ...sharedSchemas(),
    ...verificationSchemas(),
    ...dataSubjectSchemas(),
    ...walletSchemas(),
    ...topUpLimitsSchemas(),
    ...paystackKeySchemas(),
    ...topUpOperationsSchemas(),
    ...webhookSchemas(),
    ...verificationFlowSchemas(),
    ...organizationSchemas(),
    ...walletHistorySchemas(),
    ...projectionStatusSchemas(),
  };
  config.components = { ...config.components, schemas: schemas, responses: sharedResponses() };
  const scanned = SwaggerModule.createDocument(app, config);
  // The console's routes have their own document (buildConsoleOpenApiDocument).
  scanned.paths = Object.fromEntries(Object.entries(scanned.paths).filter(([path]) => !path.startsWith(CONSOLE_API)));
  return finish(scanned);
}

const CONSOLE_API = '/console/api/';

const CONSOLE_DESCRIPTION = [
  "The API of the service's own web console (/console): not for integrators, whose API is the service's other document, and free to change with the console.",
  "Answers are in the same envelope: `{status: true, data, meta?}`, or `{status: false, error: {code, message, details}}`. Every route but the few open to anyone takes the session cookie; every write also takes the session's CSRF token (the session's `csrfToken`) in `X-CSRF-Token`.",
].join('\n\n');

/** The references of a JSON value: `#/components/schemas/<name>` -> name. */
function schemaRefs(node: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const item of node) schemaRefs(item, into);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) into.add(value.slice('#/components/schemas/'.length));
      else schemaRefs(value, into);
    }
  }
  return into;
}

/**
 * The console's OpenAPI 3.1 document (openapi/console.json): the `/console/api` routes, from the
 * console controllers' decorators (src/console/console.openapi.ts) and the schemas it shares with
 * the integrators' document; only the schemas its operations reach. The console's types are
 * generated from it (scripts/generate-types.mjs).
 */
export function buildConsoleOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Identity verification service: console API')
    .setDescription(CONSOLE_DESCRIPTION)
    .setVersion('1')
    .addServer('/', 'The service that serves the console')
    .addSecurity('consoleSession', { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'The session cookie the sign-in sets (HttpOnly, path /console).' });
  for (const tag of CONSOLE_TAGS) builder.addTag(tag.name, tag.description);
  const config = builder.build();
  const all: Record<string, Schema> = {
    ...sharedSchemas(),
    ...verificationSchemas(),
    ...dataSubjectSchemas(),
    ...walletSchemas(),
    ...webhookSchemas(),
    ...organizationSchemas(),
    ...projectionStatusSchemas(),
    ...walletHistorySchemas(),
    ...verificationFlowSchemas(),
    ...topUpOperationsSchemas(),
    ...consoleSchemas(),
  };
  config.components = { ...config.components, schemas: all };
  const scanned = SwaggerModule.createDocument(app, config);
  const paths = Object.fromEntries(
    Object.entries(scanned.paths)
      .filter(([path]) => path.startsWith(CONSOLE_API))
      .sort(([a], [b]) => a.localeCompare(b)),
  ) as unknown as Record<string, Record<string, Operation>>;
  const tags = new Set<string>(CONSOLE_TAGS.map((tag) => tag.name));
  const problems: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      if (operation.operationId === undefined || operation.summary === undefined || operation.tags?.length !== 1 || !tags.has(operation.tags[0]))
        problems.push(`${method.toUpperCase()} ${path}`);
      operation.security = [{ consoleSession: [] }];
      // Every answer carries its request id, and one after a write the read-your-writes token; the playground runs on a key, with its rate-limit headers.
      const keyed = operation.operationId === 'runPlaygroundCheck';
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const names = [
          'X-Request-Id',
          'X-Consistency-Token',
          ...(keyed ? ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] : []),
          ...(status === '4XX' || status === '5XX' ? ['Retry-After'] : []),
        ];
        (response as { headers?: unknown }).headers = Object.fromEntries(names.map((name) => [name, headerRef(componentName(name))]));
      }
    }
  }
  // A route without its ConsoleRoute decorator fails the build of the document rather than going unnamed.
  if (problems.length > 0)
    throw new Error(
      `The console's OpenAPI document is incomplete; each operation needs ConsoleRoute (an operationId, a summary and a tag of CONSOLE_TAGS):\n${problems.join('\n')}`,
    );
  // Only the schemas the operations reach, and those they reach in turn.
  const reached = schemaRefs(paths, new Set());
  for (let size = 0; size !== reached.size;) {
    size = reached.size;
    for (const name of [...reached]) schemaRefs(all[name], reached);
  }
  const schemas = Object.fromEntries(
    Object.keys(all)
      .filter((name) => reached.has(name))
      .sort()
      .map((name) => [name, all[name]]),
  );
  const { openapi, info, servers, components } = scanned;
  return {
    openapi,
    info,
    servers,
    tags: config.tags,
    paths,
    components: {
      securitySchemes: components?.securitySchemes,
      schemas,
      headers: Object.fromEntries(Object.entries(HEADERS).map(([name, header]) => [componentName(name), header])),
    },
  };
}

function sortedByStatus(responses: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/** The responses of one error code are written once, under components.responses, and referred to. */
function referToSharedResponses(operation: Operation): void {
  const shared = new Map(Object.entries(sharedResponses()).map(([name, response]) => [JSON.stringify(response), { $ref: `#/components/responses/${name}` }]));
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const reference = shared.get(JSON.stringify(response));
    if (reference !== undefined) operation.responses![status] = reference;
  }
}

/** The headers answers carry, declared once under components.headers and referred to. */
const HEADERS: Record<string, { description: string; schema: Schema }> = {
  'X-Request-Id': {
    description: "The request's id: the caller's X-Request-Id when it is a plain token of 8 to 128 characters, else one the service made. Quote it when reporting a problem.",
    schema: { type: 'string', example: '0b7e9f1c-5d1a-4c35-9f0e-2f6a1d2c3b4a' },
  },
  'X-RateLimit-Limit': { description: "Requests the key may make per minute (the organization's limit, else RATE_LIMIT_PER_MINUTE).", schema: { type: 'integer', example: 600 } },
  'X-RateLimit-Remaining': { description: 'Requests the key may still make in the current minute.', schema: { type: 'integer', example: 599 } },
  'X-RateLimit-Reset': { description: 'Seconds until the current minute ends and the count starts again.', schema: { type: 'integer', example: 42 } },
  'X-Consistency-Token': {
    description:
      "What this answer covers of the key's own writes. Send it, unchanged, as X-Consistency-Token on a later read so that the read shows those writes whichever instance answers. Absent when there is nothing to cover.",
    schema: { type: 'string', example: 'v1.verification-1024.wallet-1025' },
  },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', example: 1 } },
};
/** The name of a shared error response's twin for keyed operations, which declares the key's headers too. */
const KEYED_PREFIX = 'Keyed';
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const componentName = (name: string) => name.replace(/-/g, '');

/**
 * The headers of one response: X-Request-Id on every answer; on a keyed operation's answers once
 * the key is known (all but 401) the rate-limit headers, and the consistency token (set after a
 * write whatever its outcome, so on errors too); Retry-After on 429 and 503.
 */
function headersOf(status: string, keyed: boolean): Record<string, unknown> {
  const names = ['X-Request-Id'];
  if (keyed && status !== '401') names.push('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Consistency-Token');
  if (status === '429' || status === '503') names.push('Retry-After');
  return Object.fromEntries(names.map((name) => [name, headerRef(componentName(name))]));
}

/** Examples of the patterns whose schemas give none (a test finds any other pattern an example breaks). */
const PATTERN_EXAMPLES: Record<string, string> = {
  '^\\d+$': '1024',
  '^[0-9a-f]{64}$': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '^service_(test|live)_': 'service_test_Xk4p',
  '^service_(test|live)_[A-Za-z0-9_-]{43}$': 'service_test_Xk4pQ2mZ8rT1vB6nW3yL9sD0fG7hJ5kA2cE4iO8uY1q',
};

/**
 * An example value made from a schema: its own `example`, else its `const`, first enum value or
 * first alternative, objects from their properties. The success answers' examples come from here,
 * so they cannot drift from the schemas (a test checks each against its schema).
 */
function exampleOf(schema: unknown, schemas: Record<string, unknown>, depth = 0): unknown {
  if (schema === null || typeof schema !== 'object' || depth > 12) return null;
  const node = schema as Record<string, unknown>;
  if (typeof node.$ref === 'string') return exampleOf(schemas[node.$ref.split('/').pop() as string], schemas, depth + 1);
  if ('example' in node) return node.example;
  if (Array.isArray(node.examples) && node.examples.length > 0) return node.examples[0];
  if ('const' in node) return node.const;
  if (Array.isArray(node.enum)) return node.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) if (Array.isArray(node[key])) return exampleOf(node[key][0], schemas, depth + 1);
  if (Array.isArray(node.allOf)) return Object.assign({}, ...(node.allOf as unknown[]).map((part) => exampleOf(part, schemas, depth + 1) as object)) as object;
  const type: unknown = Array.isArray(node.type) ? (node.type as unknown[])[0] : node.type;
  if (type === 'object' || node.properties !== undefined) {
    const properties = (node.properties ?? {}) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, exampleOf(property, schemas, depth + 1)]));
  }
  if (type === 'array') return node.items === undefined ? [] : [exampleOf(node.items, schemas, depth + 1)];
  if (type === 'integer' || type === 'number') return typeof node.minimum === 'number' ? node.minimum : 0;
  if (type === 'boolean') return true;
  if (type === 'null') return null;
  if (type === 'string') {
    const byFormat: Record<string, string> = {
      'date-time': '2026-11-22T07:15:00.123+00:00',
      date: '2026-11-22',
      uri: 'https://api.example.com/v1/portraits/prt_0123456789abcdef_1f_2a0?expires=1795000000&signature=3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      uuid: '0b7e9f1c-5d1a-4c35-9f0e-2f6a1d2c3b4a',
      email: 'ops@example.com',
    };
    if (typeof node.format === 'string' && byFormat[node.format] !== undefined) return byFormat[node.format];
    if (typeof node.pattern === 'string' && PATTERN_EXAMPLES[node.pattern] !== undefined) return PATTERN_EXAMPLES[node.pattern];
    return typeof node.minLength === 'number' ? 'x'.repeat(node.minLength) : 'text';
  }
  return null;
}

/** Puts in the per-scope operations and /metrics, orders the paths by tag, and states every operation's security. */
function finish(document: OpenAPIObject): OpenAPIObject {
  const paths = { ...document.paths, ...scopeOperations(), '/metrics': METRICS_PATH_ITEM } as unknown as Record<string, Record<string, Operation>>;
  const tagOrder = (path: string): number => {
    const first = Object.values(paths[path]).find((operation) => operation.tags !== undefined);
    return TAGS.findIndex((tag) => tag.name === first?.tags?.[0]);
  };
  const ordered = Object.keys(paths).sort((a, b) => tagOrder(a) - tagOrder(b) || a.localeCompare(b));
  const problems: string[] = [];
  for (const path of ordered) {
    for (const method of HTTP_METHODS) {
      const operation = paths[path][method];
      if (operation === undefined) continue;
      const name = `${method.toUpperCase()} ${path}`;
      if (operation.operationId === undefined || operation.summary === undefined || operation.tags?.length !== 1) problems.push(`${name}: an operationId, a summary and one tag`);
      if (tagOrder(path) < 0) problems.push(`${name}: a tag of TAGS`);
      // The router refuses a parameter that is not valid percent-encoding before the route runs.
      if (path.includes('{') && operation.responses?.['400'] === undefined) operation.responses = sortedByStatus({ ...operation.responses, ...errorResponses('bad_request') });
      referToSharedResponses(operation);
      if (operation.security === undefined || operation.security.length === 0) {
        if (PUBLIC_OPERATIONS.has(operation.operationId ?? '')) operation.security = [];
        else problems.push(`${name}: a security requirement (or a place in PUBLIC_OPERATIONS)`);
      }
    }
  }
  // Every operation is checked here rather than trusted: a route that lacks its decorators fails the build of the document.
  if (problems.length > 0) throw new Error(`The OpenAPI document is incomplete; each operation needs:\n${problems.join('\n')}`);
  // Headers and examples, once every operation's responses are final.
  const sharedStatus = new Map<string, string>();
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>;
  for (const path of ordered) {
    for (const method of HTTP_METHODS) {
      const operation = paths[path][method];
      if (operation === undefined) continue;
      const keyed = (operation.security ?? []).some((requirement) => typeof requirement === 'object' && requirement !== null && 'serviceKey' in requirement);
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const declared = response as { $ref?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> };
        if (declared.$ref !== undefined) {
          const name = declared.$ref.split('/').pop() as string;
          // A keyed operation's answer carries the key's headers: it refers to the shared response's keyed twin.
          const keyedTwin = keyed && status !== '401';
          if (keyedTwin) {
            (operation.responses as Record<string, unknown>)[status] = { $ref: `#/components/responses/${KEYED_PREFIX}${name}` };
            sharedStatus.set(`${KEYED_PREFIX}${name}`, status);
          } else sharedStatus.set(name, status);
          continue;
        }
        declared.headers = { ...headersOf(status, keyed), ...declared.headers };
        if (!status.startsWith('2')) continue;
        for (const [contentType, media] of Object.entries(declared.content ?? {})) {
          if (media.example !== undefined || media.examples !== undefined) continue;
          media.example =
            contentType === 'application/json'
              ? exampleOf(media.schema, schemas)
              : contentType.startsWith('image/')
                ? '(the image bytes)'
                : '# HELP http_requests_total Requests answered\n';
        }
      }
    }
  }
  // Only the shared responses some operation refers to, each with the headers of its status (and a keyed twin's, the key's too).
  const text = JSON.stringify(paths);
  const responses = Object.fromEntries(
    Object.entries(document.components?.responses ?? {})
      .flatMap(([name, response]): [string, object][] => [
        [name, { ...(response as object), headers: headersOf(sharedStatus.get(name) ?? '', false) }],
        [`${KEYED_PREFIX}${name}`, { ...(response as object), headers: headersOf(sharedStatus.get(`${KEYED_PREFIX}${name}`) ?? '', true) }],
      ])
      .filter(([name]) => text.includes(`"#/components/responses/${name}"`)),
  );
  const { openapi, info, servers, tags, components, ...rest } = document;
  return {
    openapi,
    info,
    servers,
    tags,
    'x-tagGroups': [
      { name: 'Integrator API', tags: INTEGRATOR_TAGS },
      { name: 'Admin API', tags: TAGS.filter((tag) => tag.audience === 'operator').map((tag) => tag.name) },
    ],
    ...rest,
    paths: Object.fromEntries(ordered.map((path) => [path, paths[path]])) as never,
    components: { ...components, responses, headers: Object.fromEntries(Object.entries(HEADERS).map(([name, header]) => [componentName(name), header])) as never },
  } as unknown as OpenAPIObject;
}

/**
 * The document without a running service: the application's module graph in Nest's preview mode,
 * which instantiates nothing, so no database or event store is needed (`npm run openapi`, tests).
 */
export async function generateOpenApiDocument(which: 'integrators' | 'console' = 'integrators'): Promise<OpenAPIObject> {
  const config = loadConfig({ DATABASE_URL: 'postgres://openapi@127.0.0.1:1/none', DATA_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'), LOG_LEVEL: 'silent' });
  const app = await NestFactory.create(
    AppModule.forRoot({ config, databaseUrl: 'postgres://openapi@127.0.0.1:1/none', embedded: false, adminToken: undefined }),
    new FastifyAdapter(),
    {
      preview: true,
      logger: false,
      abortOnError: false,
    },
  );
  try {
    return which === 'console' ? buildConsoleOpenApiDocument(app) : buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

/** The document as committed (`openapi/openapi.json`): two-space JSON and a final newline. */
export function openApiJson(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The swagger-ui-dist files the page needs, served by name only (no path from the request reaches the filesystem). */
const UI_ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Identity verification service API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"><link rel="icon" href="/docs/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/swagger-ui-standalone-preset.js"></script>
<script src="/docs/swagger-initializer.js"></script>
</body></html>`;

/** A file rather than an inline script, so that the page's Content-Security-Policy needs no 'unsafe-inline' for scripts. */
const INITIALIZER = `window.ui = SwaggerUIBundle({ url: '/docs/json', dom_id: '#swagger-ui', presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });\n`;

/** The UI loads its own scripts and styles (swagger-ui sets inline styles) and data: images; nothing from elsewhere. */
const DOCS_HEADERS = helmetHeaders({
  ...API_HELMET_OPTIONS,
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
      objectSrc: ["'none'"],
    },
  },
});
const DOCS_ROUTE = { config: { securityHeaders: DOCS_HEADERS } };

/**
 * Off with DOCS_ENABLED=false (the default when NODE_ENV=production).
 * Serves the JSON (and YAML) document at /docs/json (/docs/yaml) and the UI at /docs. The UI's
 * assets are served here from swagger-ui-dist rather than through @fastify/static, whose ESM-only
 * dependencies the test runner cannot load.
 */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), { ui: false, jsonDocumentUrl: 'docs/json', yamlDocumentUrl: 'docs/yaml' });
  const assetsDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  fastify.get('/docs', DOCS_ROUTE, async (_request, reply) => reply.header('content-type', 'text/html; charset=utf-8').send(PAGE));
  fastify.get('/docs/swagger-initializer.js', DOCS_ROUTE, async (_request, reply) => reply.header('content-type', 'application/javascript; charset=utf-8').send(INITIALIZER));
  for (const [file, contentType] of Object.entries(UI_ASSETS)) {
    fastify.get(`/docs/${file}`, DOCS_ROUTE, async (_request, reply) =>
      reply
        .header('content-type', contentType)
        .header('cache-control', 'public, max-age=3600')
        .send(await readFile(join(assetsDir, file))),
    );
  }
}
