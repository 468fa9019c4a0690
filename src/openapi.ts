import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { API_HELMET_OPTIONS, helmetHeaders } from './common/security-headers.js';
import type { FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The OpenAPI document, generated from the controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Identity verification service')
    .setDescription(
      [
        'Checks an individual against Nigerian registers and bills a kobo wallet per check.',
        'Every response is `{status, data, meta?}`; every error `{status: false, error: {code, message, details}}`.',
        'References are `vrf_` + a 26-character ULID. Timestamps are ISO 8601 with an explicit `+00:00` offset.',
        'Test keys run on the deterministic sandbox (see the README).',
      ].join('\n\n'),
    )
    .setVersion('1')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Service-Key' }, 'serviceKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Admin API token' }, 'admin')
    .build();
  return SwaggerModule.createDocument(app, config);
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
