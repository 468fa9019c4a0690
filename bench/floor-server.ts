/**
 * The machine's floors for bench:api's list and check phases: bare node:http servers that answer every request
 * without NestJS, Fastify, key, rate limit, log or metric, so that a run shows what latency the load
 * generator and the two cores allow before the service adds anything.
 *   floor-server static BODY_FILE CONTENT_TYPE: every answer is the bytes of one real answer of the
 *     service. No endpoint can do better under the same closed loop.
 *   floor-server query DATABASE_URL ORGANIZATION_ID ENVIRONMENT: every answer runs the service's own
 *     list statement (page 1, default page size) on a pool like the service's and builds the
 *     service's own envelope from its rows. No list that reads PostgreSQL on each request can do
 *     much better.
 *   floor-server batched DATABASE_URL ORGANIZATION_ID ENVIRONMENT: the same answer, but the requests
 *     that arrive while a statement is under way share the next one (the service's shared list
 *     statement, at most two under way): what the service's sharing of list statements could reach
 *     at best.
 *   floor-server check DATABASE_URL TEMPLATE_FILE PLAN|auto: the check floor (check-floor.ts) on its
 *     own migrated database: every POST writes what one check writes, in the transactions PLAN
 *     names (auto: the service's, as the store's capabilities tell).
 * It prints its port on stdout once it listens, and stops on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { ok } from '../src/common/envelope.js';
import { isEnvironment } from '../src/common/environment.js';
import { createPool } from '../src/database/pool.js';
import { listStatement, pageFromRows, pageRead, parseListQuery, sharedListStatement, type ListFilters } from '../src/verifications/verification.queries.js';
import type { VerificationRow } from '../src/verifications/verification.views.js';
import { isCheckPlan, startCheckFloor, type CheckTemplate } from './check-floor.js';

const USAGE =
  'usage: floor-server static BODY_FILE CONTENT_TYPE | floor-server query|batched DATABASE_URL ORGANIZATION_ID ENVIRONMENT | floor-server check DATABASE_URL TEMPLATE_FILE PLAN|auto';
/** The service's default pool size (DB_POOL_SIZE). */
const POOL_SIZE = 20;
const JSON_TYPE = 'application/json; charset=utf-8';

function send(response: ServerResponse, status: number, contentType: string, body: Buffer | string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) });
  response.end(body);
}

function staticAnswer([bodyFile, contentType]: string[]): (response: ServerResponse) => void {
  if (bodyFile === undefined || contentType === undefined) throw new Error(USAGE);
  const body = readFileSync(bodyFile);
  return (response) => send(response, 200, contentType, body);
}

/** What the list floors read with: the pool, the key's organization and environment, and page 1's filters. */
function listSource([databaseUrl, organizationId, environment]: string[]) {
  if (databaseUrl === undefined || organizationId === undefined || environment === undefined || !isEnvironment(environment)) throw new Error(USAGE);
  return { pool: createPool(databaseUrl, POOL_SIZE), key: { organizationId, environment }, filters: parseListQuery({}) };
}

/** The service's answer built from the list statement's rows, as the service builds it. */
function sendPage(response: ServerResponse, rows: Parameters<typeof pageFromRows>[0], filters: ListFilters): void {
  const page = pageFromRows(rows, filters);
  send(response, 200, JSON_TYPE, JSON.stringify(ok(page.data, page.meta)));
}

const sendUnavailable = (response: ServerResponse) => send(response, 503, JSON_TYPE, '{"status":false}');

function listAnswer(args: string[]): (response: ServerResponse) => void {
  const { pool, key, filters } = listSource(args);
  return (response) => {
    pool.query(listStatement(pageRead(key, filters))).then(
      ({ rows }) => sendPage(response, rows, filters),
      () => sendUnavailable(response),
    );
  };
}

const MAX_STATEMENTS_UNDER_WAY = 2;

function batchedAnswer(args: string[]): (response: ServerResponse) => void {
  const { pool, key, filters } = listSource(args);
  let waiting: ServerResponse[] = [];
  let underWay = 0;
  const flush = () => {
    if (waiting.length === 0 || underWay >= MAX_STATEMENTS_UNDER_WAY) return;
    const batch = waiting;
    waiting = [];
    underWay++;
    const each = <T>(value: T) => batch.map(() => value);
    pool
      .query<Partial<VerificationRow> & { i: string; total: string | null }>(sharedListStatement({ scope: false, status: false }, each(pageRead(key, filters))))
      .then(
        ({ rows }) => {
          const rowsOf = batch.map((): typeof rows => []);
          for (const row of rows) rowsOf[Number(row.i) - 1].push(row);
          batch.forEach((response, k) => sendPage(response, rowsOf[k], filters));
        },
        () => batch.forEach(sendUnavailable),
      )
      .finally(() => {
        underWay--;
        flush();
      });
  };
  return (response) => {
    waiting.push(response);
    if (waiting.length === 1) setImmediate(flush);
  };
}

/**
 * The check floor (check-floor.ts): a POST writes one check and answers the service's answer to it;
 * GET /caught-up answers 200 once the projections have applied everything the floor wrote, 503
 * before, and names the plan the floor follows.
 */
async function checkAnswer([databaseUrl, templateFile, plan]: string[]): Promise<(request: IncomingMessage, response: ServerResponse) => void> {
  if (databaseUrl === undefined || templateFile === undefined || plan === undefined || !(plan === 'auto' || isCheckPlan(plan))) throw new Error(USAGE);
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as CheckTemplate;
  const floor = await startCheckFloor(createPool(databaseUrl, POOL_SIZE), databaseUrl, template, plan);
  return (request, response) => {
    if (request.method === 'GET' && request.url === '/caught-up') {
      floor.caughtUp().then(
        (caughtUp) => send(response, caughtUp ? 200 : 503, JSON_TYPE, JSON.stringify({ caughtUp, plan: floor.plan })),
        () => sendUnavailable(response),
      );
      return;
    }
    floor.check().then(
      (answer) => send(response, answer.status, answer.contentType, answer.body),
      () => sendUnavailable(response),
    );
  };
}

const [mode, ...args] = process.argv.slice(2);
const listAnswers = { static: staticAnswer, query: listAnswer, batched: batchedAnswer } as const;
const answer: (request: IncomingMessage, response: ServerResponse) => void =
  mode === 'check'
    ? await checkAnswer(args)
    : mode !== undefined && Object.hasOwn(listAnswers, mode)
      ? (
          (list) => (_request: IncomingMessage, response: ServerResponse) =>
            list(response)
        )(listAnswers[mode as keyof typeof listAnswers](args))
      : (() => {
          throw new Error(USAGE);
        })();

const server = createServer((request, response) => {
  // Read the request to its end, as the service does, before answering.
  request.resume();
  request.once('end', () => answer(request, response));
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
