import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sandboxPortrait } from '../../src/providers/sandbox.provider.js';
import { SCOPES, type Scope } from '../../src/scopes/scopes.js';
import { scopeBody } from '../support/scope-bodies.js';
import { randomBytes } from 'node:crypto';
import { callerRequestIdHash } from '../../src/common/request-context.js';
import { allEvents } from '../support/event-store.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

/**
 * Every scope run with inputs found nowhere else, then the captured log searched for each of
 * them, for the key, and for every value the results carried (names, dates of birth, numbers).
 */
const PICKED: Partial<Record<Scope, (digit: string) => Record<string, string>>> = {
  nin: (d) => ({ nin: `7391462805${d}` }),
  pnv: (d) => ({ phone: `0816473920${d}` }),
  vnin: (d) => ({ vnin: `QX73KW19ZP46MV8${d}` }),
  bvn: (d) => ({ bvn: `6628401937${d}` }),
  pvc: (d) => ({ vin: `77K3QZ0938Y1R55L20${d}` }),
  passport: (d) => ({ passport_number: `K7294018${d}` }),
  bank_account: (d) => ({ bank: '058', account_number: `471920365${d}` }),
  premium_bank_account: (d) => ({ account_number: `539174628${d}` }),
  phone: (d) => ({ phone: `+234809517364${d}` }),
  face_match: (d) => ({ image: sandboxPortrait('log-probe').toString('base64'), bvn: `6628401937${d}` }),
};
/** The hand-picked inputs; a scope without them runs on its example (test/support/scope-bodies.ts). */
const inputs = (scope: Scope, digit: string): Record<string, string> => PICKED[scope]?.(digit) ?? scopeBody(scope, digit);
/** found, not_found and provider failure: the success path and both error paths of each scope. */
const DIGITS = ['5', '1', '2'];
/** A custom header carrying a secret: not on the request log's allow list, so never logged. */
const PARTNER_HEADER = 'x-partner-token';
const PARTNER_SECRET = 'partner-secret-5d1c9e7a';
/** A logged header an operator asked to redact through LOG_REDACT_PATHS. */
const AGENT = 'partner-agent-31f7c0d2';

interface LogLine {
  readonly level: string;
  readonly msg?: string;
  readonly requestId?: string;
  readonly organizationId?: string;
  readonly keyId?: string;
  readonly [field: string]: unknown;
}

/** Every string of a JSON value, at any depth. */
function leafStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(leafStrings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(leafStrings);
  return [];
}

describe('Structured logs', () => {
  let app: TestApp;
  const captured: string[] = [];
  let key: { id: string; key: string };
  let organizationId: string;
  const responses: { scope: Scope; response: TestResponse }[] = [];

  beforeAll(async () => {
    app = await startTestApp({
      env: { LOG_LEVEL: 'info', LOG_REDACT_PATHS: 'req.headers.host' },
      logDestination: { write: (line: string) => void captured.push(line) },
    });
    organizationId = (await createOrganization(app, { approved: true })).id;
    key = await issueKey(app, organizationId);
    for (const scope of SCOPES) {
      for (const digit of DIGITS) {
        const response = await app.request('POST', `/v1/${scope}`, {
          body: inputs(scope, digit),
          headers: { 'x-service-key': key.key, [PARTNER_HEADER]: PARTNER_SECRET, 'user-agent': AGENT },
        });
        responses.push({ scope, response });
      }
    }
    // A refused body (422) and a malformed one (400): the values must not surface through error paths either.
    responses.push({ scope: 'nin', response: await app.request('POST', '/v1/nin', { body: { nin: '7391462805', extra: '73914628059' }, headers: { 'x-service-key': key.key } }) });
    responses.push({
      scope: 'bvn',
      response: await app.request('POST', '/v1/bvn', { rawBody: '{"bvn":"66284019377"', headers: { 'x-service-key': key.key, 'content-type': 'application/json' } }),
    });
    // A wrong key: it must not be logged either.
    responses.push({ scope: 'nin', response: await app.request('POST', '/v1/nin', { body: inputs('nin', '5'), headers: { 'x-service-key': `${key.key.slice(0, -4)}ZZZZ` } }) });
  });

  afterAll(async () => {
    await app?.close();
  });

  const lines = (): LogLine[] =>
    captured
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);

  it('ran every scope through found, not_found and a provider failure', () => {
    const statuses = responses.slice(0, SCOPES.length * DIGITS.length).map(({ response }) => response.status);
    expect(new Set(statuses)).toEqual(new Set([201, 502]));
    expect(responses.at(-3)?.response.status).toBe(422);
    expect(responses.at(-2)?.response.status).toBe(400);
    expect(responses.at(-1)?.response.status).toBe(401);
  });

  it('never logs an input, the key, a redacted header or anything a result carried', () => {
    const text = captured.join('');
    expect(lines().length).toBeGreaterThan(SCOPES.length * DIGITS.length);
    const secrets = new Set<string>([key.key, `${key.key.slice(0, -4)}ZZZZ`, PARTNER_SECRET, PARTNER_HEADER, AGENT, '73914628059', '66284019377']);
    for (const scope of SCOPES) {
      for (const digit of DIGITS) {
        for (const [field, value] of Object.entries(inputs(scope, digit))) {
          if (field === 'bank') continue; // a public bank code, not personal data
          // The image whole and any 40-character slice of it.
          if (field === 'image') for (let at = 0; at + 40 <= value.length; at += 997) secrets.add(value.slice(at, at + 40));
          else secrets.add(value);
        }
      }
    }
    for (const { response } of responses) {
      const { result } = response.body?.data ?? {};
      for (const [field, value] of Object.entries(result ?? {})) {
        if (field === 'portraitUrl') continue;
        // Names, dates of birth, numbers, addresses: every string of six characters or more.
        for (const leaf of leafStrings(value)) if (leaf.length >= 6) secrets.add(leaf);
      }
    }
    expect(secrets.size).toBeGreaterThan(60);
    const leaked = [...secrets].filter((secret) => text.includes(secret));
    expect(leaked).toEqual([]);
    expect(text).toContain('[redacted]');
  });

  it('gives every line of a request its request id (the X-Request-Id echoed), the organization and the key id', () => {
    const all = lines();
    for (const { response } of responses.slice(0, SCOPES.length * DIGITS.length)) {
      const requestId = response.headers.get('x-request-id');
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      const ofRequest = all.filter((line) => line.requestId === requestId);
      expect(ofRequest.length).toBeGreaterThanOrEqual(1);
      for (const line of ofRequest) expect(line).toMatchObject({ organizationId, keyId: key.id });
      const completed = ofRequest.find((line) => typeof line.res === 'object');
      expect(completed).toMatchObject({ res: { statusCode: response.status }, req: { method: 'POST' }, durationMs: expect.any(Number) });
    }
    // Lines of a request refused before the key guard carry its id, and no organization.
    const refused = responses.at(-1)?.response.headers.get('x-request-id');
    const refusedLines = all.filter((line) => line.requestId === refused);
    expect(refusedLines.length).toBeGreaterThanOrEqual(1);
    for (const line of refusedLines) expect(line.organizationId).toBeUndefined();
  });

  it("echoes a caller's X-Request-Id and never logs it nor writes it in the event log", async () => {
    // A caller may put anything in the header, a customer's NIN included: the event log keeps the server's own id.
    const callerId = '73914628053';
    const before = (await allEvents(app.eventStore)).length;
    const response = await app.request('POST', '/v1/nin', { body: inputs('nin', '5'), headers: { 'x-service-key': key.key, 'x-request-id': callerId } });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBe(callerId);
    const written = (await allEvents(app.eventStore))
      .slice(before)
      .filter((event) => event.metadata.correlationId !== undefined && JSON.stringify(event.data).includes(response.body.data.reference));
    expect(written.length).toBeGreaterThanOrEqual(2);
    const carrying = (await allEvents(app.eventStore)).filter((event) => JSON.stringify(event.metadata).includes(callerId));
    expect(carrying.map((event) => `${event.type} ${String(event.metadata.correlationId)}`)).toEqual([]);
    expect(lines().filter((line) => JSON.stringify(line).includes(callerId))).toEqual([]);
    // The request's line, found by the server's id its events carry.
    const serverId = String(written[0].metadata.correlationId);
    expect(lines().filter((line) => line.requestId === serverId && line.res !== undefined)).toEqual([
      expect.objectContaining({ organizationId, keyId: key.id, res: { statusCode: 201 } }),
    ]);
    expect(serverId).toMatch(/^[0-9a-f-]{36}$/);
    for (const event of written) expect(event.metadata.correlationId).toBe(serverId);
  });

  it("with REQUEST_ID_HASH_KEY, keeps only the keyed hash of a caller's X-Request-Id with the events, so whoever holds the key finds them", async () => {
    const hashKey = randomBytes(32);
    const keyedLines: string[] = [];
    const keyed = await startTestApp({
      database: app.database,
      env: { REQUEST_ID_HASH_KEY: hashKey.toString('base64'), LOG_LEVEL: 'info' },
      logDestination: { write: (line: string) => void keyedLines.push(line) },
    });
    try {
      const callerId = '73914628054';
      const response = await keyed.request('POST', '/v1/nin', { body: inputs('nin', '5'), headers: { 'x-service-key': key.key, 'x-request-id': callerId } });
      expect(response.status).toBe(201);
      const events = await allEvents(keyed.eventStore);
      expect(events.filter((event) => JSON.stringify(event.metadata).includes(callerId))).toEqual([]);
      const found = events.filter((event) => event.metadata.callerRequestIdHash === callerRequestIdHash(hashKey, callerId));
      expect(found.map((event) => event.type)).toEqual(expect.arrayContaining(['VerificationRequested', 'WalletFundsReserved']));
      expect(found.every((event) => JSON.stringify(event.data).includes(response.body.data.reference))).toBe(true);
      // Its log line names the caller's id by the same hash, never in clear.
      const logged = keyedLines.join('');
      expect(logged).not.toContain(callerId);
      expect(logged).toContain(`"callerRequestIdHash":"${callerRequestIdHash(hashKey, callerId)}"`);
    } finally {
      await keyed.close();
    }
  });
});
