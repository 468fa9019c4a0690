/**
 * The machine's floors for bench:api's list phase: bare node:http servers that answer every request
 * without NestJS, Fastify, key, rate limit, log or metric, so that a run shows what latency the load
 * generator and the two cores allow before the service adds anything.
 *   floor-server static BODY_FILE CONTENT_TYPE: every answer is the bytes of one real answer of the
 *     service. No endpoint can do better under the same closed loop.
 *   floor-server query DATABASE_URL ORGANIZATION_ID ENVIRONMENT: every answer runs the service's own
 *     list statement (page 1, default page size) on a pool like the service's and builds the
 *     service's own envelope from its rows. No list that reads PostgreSQL on each request can do
 *     much better.
 * It prints its port on stdout once it listens, and stops on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { ok } from '../src/common/envelope.js';
import { isEnvironment } from '../src/common/environment.js';
import { createPool } from '../src/database/pool.js';
import { listStatement, pageFromRows, parseListQuery } from '../src/verifications/verification.queries.js';

const USAGE = 'usage: floor-server static BODY_FILE CONTENT_TYPE | floor-server query DATABASE_URL ORGANIZATION_ID ENVIRONMENT';
/** The service's default pool size (DB_POOL_SIZE). */
const POOL_SIZE = 20;

function send(response: ServerResponse, status: number, contentType: string, body: Buffer | string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) });
  response.end(body);
}

function staticAnswer([bodyFile, contentType]: string[]): (response: ServerResponse) => void {
  if (bodyFile === undefined || contentType === undefined) throw new Error(USAGE);
  const body = readFileSync(bodyFile);
  return (response) => send(response, 200, contentType, body);
}

function listAnswer([databaseUrl, organizationId, environment]: string[]): (response: ServerResponse) => void {
  if (databaseUrl === undefined || organizationId === undefined || environment === undefined || !isEnvironment(environment)) throw new Error(USAGE);
  const pool = createPool(databaseUrl, POOL_SIZE);
  const filters = parseListQuery({});
  const statement = () => listStatement({ organizationId, environment }, filters);
  return (response) => {
    pool.query(statement()).then(
      ({ rows }) => {
        const page = pageFromRows(rows, filters);
        send(response, 200, 'application/json; charset=utf-8', JSON.stringify(ok(page.data, page.meta)));
      },
      () => send(response, 503, 'application/json; charset=utf-8', '{"status":false}'),
    );
  };
}

const [mode, ...args] = process.argv.slice(2);
const answer = mode === 'static' ? staticAnswer(args) : mode === 'query' ? listAnswer(args) : undefined;
if (answer === undefined) throw new Error(USAGE);

const server = createServer((request, response) => {
  // Read the request to its end, as the service does, before answering.
  request.resume();
  request.once('end', () => answer(response));
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
