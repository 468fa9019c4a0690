import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { ErrorEnvelope } from './envelope.js';

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
}

/** Longest list of unknown query parameters an error names (their names are the caller's text). */
const MAX_NAMED = 16;
const MAX_NAME_LENGTH = 50;

/** `/v1/verifications/:reference` as a pattern of concrete paths. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/**
 * What the router knows beyond "no route": which methods a path takes (so a wrong method is 405
 * with Allow rather than 404), and which query parameters each documented operation takes (so a
 * misspelt filter is refused rather than ignored, and the whole list returned). The operations'
 * parameters come from the OpenAPI document itself, so the two cannot disagree.
 */
export class RouteTable {
  private readonly routes: Route[] = [];
  /** `GET /v1/verifications` → the query parameters it takes; operations absent take whatever they read. */
  private readonly queryNames = new Map<string, readonly string[]>();
  /** `/v1/verifications/{reference}` as a pattern, per documented path. */
  private readonly documentedPaths: { readonly template: string; readonly pattern: RegExp; readonly methods: readonly string[] }[] = [];
  /** The first segments of the document's paths (`v1`, `admin`, `health`, `metrics`). */
  private readonly documentedPrefixes = new Set<string>();

  add(methods: string | readonly string[], url: string): void {
    // A catch-all (the console's pages, CORS's preflight) would make every path "exist".
    if (url.includes('*')) return;
    const pattern = patternOf(url);
    for (const method of ([] as string[]).concat(methods)) this.routes.push({ method: method.toUpperCase(), pattern });
  }

  /**
   * The methods the routes of `path` take, or none when no route has that path. Under the
   * document's prefixes (/v1, /admin, …) the document decides: the router's `/v1/:scope` would
   * otherwise make every `/v1/anything` a path that "takes POST".
   */
  allowedMethods(path: string): string[] {
    const documented = this.documentedPrefixes.has(path.split('/')[1] ?? '');
    const matching = documented
      ? this.documentedPaths.filter(({ pattern }) => pattern.test(path)).flatMap(({ methods }) => methods)
      : this.routes.filter((route) => route.pattern.test(path)).map((route) => route.method);
    const methods = new Set(matching);
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }

  useDocument(document: OpenAPIObject): void {
    for (const [template, item] of Object.entries(document.paths)) {
      const methods: string[] = [];
      this.documentedPaths.push({ template, pattern: patternOf(template.replace(/\{(\w+)\}/g, ':$1')), methods });
      this.documentedPrefixes.add(template.split('/')[1] ?? '');
      for (const [method, operation] of Object.entries(item as Record<string, { parameters?: { in?: string; name?: string }[] }>)) {
        if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
        methods.push(method.toUpperCase());
        const names = (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'query' && typeof parameter.name === 'string')
          .map((parameter) => parameter.name as string);
        this.queryNames.set(`${method.toUpperCase()} ${template}`, names);
      }
    }
    // A literal path (`/v1/nin`) before a templated one that also matches it.
    this.documentedPaths.sort((a, b) => Number(a.template.includes('{')) - Number(b.template.includes('{')));
  }

  /** The query parameters of `method path` that its operation does not take; undefined for a path the document lacks. */
  unknownQueryNames(method: string, path: string, given: readonly string[]): { unknown: string[]; known: readonly string[] } | undefined {
    const lookup = method === 'HEAD' ? 'GET' : method;
    for (const { template, pattern } of this.documentedPaths) {
      if (!pattern.test(path)) continue;
      const known = this.queryNames.get(`${lookup} ${template}`);
      if (known === undefined) continue;
      return { unknown: given.filter((name) => !known.includes(name)), known };
    }
    return undefined;
  }
}

const TABLES = new WeakMap<FastifyInstance, RouteTable>();

/** The path of a request, without its query string. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Records every route as it is registered (so before any route is), and refuses query parameters the document does not give the operation. */
export function registerRouteTable(fastify: FastifyInstance): RouteTable {
  const table = new RouteTable();
  TABLES.set(fastify, table);
  fastify.addHook('onRoute', (route) => table.add(route.method, route.url ?? route.path));
  fastify.addHook('onRequest', (request, reply, done) => {
    const refusal = unknownQueryRefusal(table, request);
    if (refusal === undefined) done();
    else void reply.status(422).send(refusal);
  });
  return table;
}

function unknownQueryRefusal(table: RouteTable, request: FastifyRequest): ErrorEnvelope | undefined {
  const names = Object.keys(request.query ?? {});
  if (names.length === 0) return undefined;
  const found = table.unknownQueryNames(request.method, pathOf(request.url), names);
  if (found === undefined || found.unknown.length === 0) return undefined;
  const takes = found.known.length === 0 ? 'this operation takes no query parameters' : `not a query parameter of this operation (it takes ${found.known.join(', ')})`;
  const fields = found.unknown.slice(0, MAX_NAMED).map((name) => ({ field: name.slice(0, MAX_NAME_LENGTH), message: takes }));
  return { status: false, error: { code: 'validation_failed', message: 'The request is invalid', details: { fields } } };
}

/** The methods `request`'s path takes, when it has routes but none for its method: the answer is then 405, not 404. */
export function methodsAllowed(request: FastifyRequest): string[] | undefined {
  const table = TABLES.get(request.server);
  if (table === undefined) return undefined;
  const allowed = table.allowedMethods(pathOf(request.url));
  return allowed.length === 0 || allowed.includes(request.method) ? undefined : allowed;
}
