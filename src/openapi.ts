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
import { walletSchemas } from './wallets/wallet.openapi.js';
import { webhookSchemas } from './webhooks/webhook.openapi.js';
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
    description: 'The Prometheus text format, without a key: keep it off the public network, or switch it off with METRICS_ENABLED=false (then 404). 503 only while the service shuts down.',
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
    ...walletSchemas(),
    ...webhookSchemas(),
    ...organizationSchemas(),
    ...walletHistorySchemas(),
    ...projectionStatusSchemas(),
  };
  config.components = { ...config.components, schemas: schemas as never, responses: sharedResponses() as never };
  const scanned = SwaggerModule.createDocument(app, config);
  return finish(scanned);
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
  // Only the shared responses some operation refers to.
  const text = JSON.stringify(paths);
  const responses = Object.fromEntries(Object.entries(document.components?.responses ?? {}).filter(([name]) => text.includes(`"#/components/responses/${name}"`)));
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
    components: { ...components, responses },
  } as OpenAPIObject;
}

/**
 * The document without a running service: the application's module graph in Nest's preview mode,
 * which instantiates nothing, so no database or event store is needed (`npm run openapi`, tests).
 */
export async function generateOpenApiDocument(): Promise<OpenAPIObject> {
  const config = loadConfig({ DATABASE_URL: 'postgres://openapi@127.0.0.1:1/none', DATA_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'), LOG_LEVEL: 'silent' });
  const app = await NestFactory.create(AppModule.forRoot({ config, databaseUrl: 'postgres://openapi@127.0.0.1:1/none', embedded: false, adminToken: undefined }), new FastifyAdapter(), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app);
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
  fastify.get('/docs/swagger-initializer.js', DOCS_ROUTE, async (_request, reply) =>
    reply.header('content-type', 'application/javascript; charset=utf-8').send(INITIALIZER),
  );
  for (const [file, contentType] of Object.entries(UI_ASSETS)) {
    fastify.get(`/docs/${file}`, DOCS_ROUTE, async (_request, reply) =>
      reply.header('content-type', contentType).header('cache-control', 'public, max-age=3600').send(await readFile(join(assetsDir, file))),
    );
  }
}
