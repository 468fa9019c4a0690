import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Clock } from '../../src/common/clock.js';
import { MAX_HEADER_BYTES, MAX_URL_LENGTH } from '../../src/common/input-limits.js';
import { sandboxKeyInput } from '../../src/providers/sandbox.provider.js';
import { READY_MADE_PEOPLE, sandboxPerson } from '../../src/scopes/sandbox-world.js';
import { isScope, SCOPES } from '../../src/scopes/scopes.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { sandboxTopUps } from '../support/topups.js';
import type { OpenApiValidator } from '../support/openapi-validator.js';
import { cutSample, toJpeg } from '../support/sample-faces.js';

/**
 * Every operation of the OpenAPI document against the running service, through the validating
 * test client (startTestApp's `validateResponses`): each answer's status must be documented for
 * its operation and its body must match the documented schema, or the request throws. The
 * operations are driven from the document itself (its paths, parameters and request examples,
 * which must pass), then through the errors any request can meet and the errors of the checks.
 */

const AUDITOR_TOKEN = `auditor_${randomUUID()}`;

interface DocumentOperation {
  readonly method: string;
  readonly template: string;
  readonly operationId: string;
  readonly secured: 'key' | 'admin' | 'none';
  readonly examples: unknown[];
  readonly hasBody: boolean;
  readonly successes: number[];
}

/** A raw HTTP/1.1 exchange, for what fetch will not send (oversized headers); the answer is checked against the document too. */
function rawRequest(baseUrl: string, text: string): Promise<{ status: number; contentType: string | null; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolveAnswer, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const answer = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = answer.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const contentType = /\r\ncontent-type: *([^\r\n]*)/i.exec(head)?.[1] ?? null;
      resolveAnswer({ status, contentType, body: rest.join('\r\n\r\n') });
    });
  });
}

describe('Answers match the OpenAPI document', () => {
  let app: TestApp;
  let openApi: OpenApiValidator;
  let operations: DocumentOperation[];
  let key: string;
  /** The organization the admin operations change (suspended, offboarded, …), and its own test key. */
  let target: { id: string; key: string };
  const values: Record<string, string> = {};
  let erasedPortraitLink: URL;

  const auth = (operation: DocumentOperation): Record<string, string> =>
    operation.secured === 'key' ? { 'x-service-key': key } : operation.secured === 'admin' ? { authorization: `Bearer ${app.adminToken}` } : {};
  const pathOf = (operation: DocumentOperation): string => {
    const path = operation.template.replace(/\{(\w+)\}/g, (_match, name: string) => {
      const value = values[`${operation.operationId}.${name}`] ?? values[name];
      if (value === undefined) throw new Error(`no value for ${name} of ${operation.operationId}`);
      return value;
    });
    const query = values[`${operation.operationId}?`];
    return query === undefined ? path : `${path}?${query}`;
  };
  /**
   * One request of the operation. A read answered 503 `service_unavailable` (its read model not yet
   * showing the key's own writes within 2 s, as a loaded test machine can make it) is asked again, as
   * the answer says and the client does, up to three times; the 503 itself was checked against the
   * document like every answer.
   */
  const call = async (operation: DocumentOperation, options: { body?: unknown; headers?: Record<string, string>; rawBody?: string; path?: string } = {}): Promise<TestResponse> => {
    const once = () =>
      app.request(operation.method, options.path ?? pathOf(operation), { body: options.body, rawBody: options.rawBody, headers: { ...auth(operation), ...options.headers } });
    let response = await once();
    for (let retry = 0; retry < 3 && operation.method === 'GET' && response.status === 503 && response.body?.error?.code === 'service_unavailable'; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      response = await once();
    }
    return response;
  };
  const byId = (operationId: string): DocumentOperation => {
    const found = operations.find((operation) => operation.operationId === operationId);
    if (found === undefined) throw new Error(`no operation ${operationId}`);
    return found;
  };
  /** The operation's example with the sandbox's deciding input ending in `digit` (2: provider failure, 3: timeout). */
  const withLastDigit = (operation: DocumentOperation, digit: string): Record<string, string> => {
    const scope = operation.template.slice('/v1/'.length);
    const example = operation.examples[0] as Record<string, string>;
    if (!isScope(scope)) throw new Error(`${operation.operationId} is not a check`);
    const deciding = sandboxKeyInput(scope, example);
    return Object.fromEntries(Object.entries(example).map(([field, value]) => [field, value === deciding ? `${value.slice(0, -1)}${digit}` : value]));
  };
  const checks = (): DocumentOperation[] => operations.filter((operation) => operation.operationId.startsWith('verify'));
  const expectError = (response: TestResponse, status: number, code: string) => expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });

  beforeAll(async () => {
    app = await startTestApp({ validateResponses: 'strict', env: { AUDITOR_TOKEN, PROVIDER_TIMEOUT_MS: '300', SANDBOX_CREDIT_KOBO: '10000000' } });
    openApi = app.openApi as OpenApiValidator;
    operations = openApi.operations().map(({ method, template, operation }) => {
      const raw = operation as unknown as {
        operationId: string;
        security: Record<string, unknown>[];
        requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
        responses: Record<string, unknown>;
      };
      const examples = Object.values(raw.requestBody?.content['application/json']?.examples ?? {}).map((example) => example.value);
      const scheme = Object.keys(raw.security[0] ?? {})[0];
      return {
        method,
        template,
        operationId: raw.operationId,
        secured: scheme === 'serviceKey' ? 'key' : scheme === 'adminToken' ? 'admin' : 'none',
        examples,
        hasBody: raw.requestBody !== undefined,
        successes: Object.keys(raw.responses)
          .map(Number)
          .filter((status) => status < 300),
      } satisfies DocumentOperation;
    });

    const organization = await createOrganization(app, { approved: true });
    key = (await issueKey(app, organization.id)).key;
    const targetOrganization = await createOrganization(app, { approved: true });
    target = { id: targetOrganization.id, key: (await issueKey(app, targetOrganization.id)).key };
    const nin = await app.request('POST', '/v1/nin', { headers: { 'x-service-key': key }, body: { nin: '57092406569' } });
    const toErase = await app.request('POST', '/v1/bvn', { headers: { 'x-service-key': key }, body: { bvn: '22689713925' } });
    const portrait = new URL(nin.body.data.result.portraitUrl as string);
    const throwaway = await issueKey(app, target.id);
    // Webhook endpoints: one of the key's (its delivery of the check below refused as a private target, so no network is needed), and one for the admin's delete.
    const keyed = { 'x-service-key': key };
    const endpoint = (await app.request('POST', '/v1/webhook_endpoints', { headers: keyed, body: { url: 'https://127.0.0.1/hooks', eventTypes: [] } })).body.data.id as string;
    const adminEndpoint = (await app.admin('POST', `/admin/v1/organizations/${target.id}/webhook_endpoints`, { environment: 'test', url: 'https://127.0.0.1/admin' })).body.data
      .id as string;
    await app.request('POST', '/v1/bvn', { headers: keyed, body: { bvn: '22689713925' } });
    let deliveryId: string | undefined;
    for (let tries = 0; tries < 200 && deliveryId === undefined; tries++) {
      deliveryId = (await app.request('GET', `/v1/webhook_endpoints/${endpoint}/deliveries`, { headers: keyed })).body.data[0]?.id as string | undefined;
      if (deliveryId === undefined) await new Promise((pause) => setTimeout(pause, 50));
    }
    if (deliveryId === undefined) throw new Error('no webhook delivery was made');
    // A hold of the key's organization, for the operations that name one (on a subject no other operation erases).
    values.holdId = (await app.request('POST', '/v1/data-subjects/holds', { headers: keyed, body: { subject: { nin: '21440414996' }, reason: 'litigation' } })).body.data
      .id as string;
    for (const operation of [
      'getWebhookEndpoint',
      'updateWebhookEndpoint',
      'deleteWebhookEndpoint',
      'rotateWebhookSecret',
      'listWebhookDeliveries',
      'resendWebhookDelivery',
      'resendWebhookDeliveries',
    ]) {
      values[`${operation}.id`] = endpoint;
      values[`admin${operation[0].toUpperCase()}${operation.slice(1)}.id`] = endpoint;
    }
    values['adminDeleteWebhookEndpoint.id'] = adminEndpoint;
    // Verification flows: one of the key's, with a session for each operation on one; one of the target's, offboarded below.
    values.flowId = (
      await app.request('POST', '/v1/verification_flows', {
        headers: keyed,
        body: { name: 'Conformance', steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }] },
      })
    ).body.data.id as string;
    values.targetFlowId = (
      await app.request('POST', '/v1/verification_flows', {
        headers: { 'x-service-key': target.key },
        body: { name: 'Offboarded', steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }] },
      })
    ).body.data.id as string;
    for (const operation of ['getVerificationFlow', 'publishVerificationFlowVersion', 'createVerificationFlowLink']) values[`${operation}.id`] = values.flowId;
    for (const operation of ['getVerificationSession', 'cancelVerificationSession', 'eraseVerificationSession']) {
      values[`${operation}.id`] = (await app.request('POST', '/v1/verification_sessions', { headers: keyed, body: { flowId: values.flowId, customerId: 'conformance' } })).body.data
        .id as string;
    }
    // A session in review (a threshold of 100 with a margin of 100 sends every face match there), taken through the hosted page's calls, for the admin's review operations.
    const reviewFlowId = (
      await app.request('POST', '/v1/verification_flows', {
        headers: keyed,
        body: {
          name: 'Review',
          steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }, { type: 'selfie' }],
          decision: { faceMatchThreshold: 100, reviewMarginPoints: 100 },
        },
      })
    ).body.data.id as string;
    const inReview = (await app.request('POST', '/v1/verification_sessions', { headers: keyed, body: { flowId: reviewFlowId, customerId: 'conformance' } })).body.data as {
      id: string;
      clientSecret: string;
    };
    // The hosted page's calls are not the document's (fetch, not the validating client).
    const hosted = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${app.baseUrl}/verify/api/sessions/${inReview.id}${path}`, {
        method,
        headers: { authorization: `Bearer ${inReview.clientSecret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { data: Record<string, unknown> };
    };
    const consentText = (await hosted('GET', '')).data.consent as { textVersion: number; textHash: string };
    await hosted('POST', '/consent', { textVersion: consentText.textVersion, textHash: consentText.textHash });
    await hosted('POST', '/identity', { kind: 'nin', number: sandboxPerson(READY_MADE_PEOPLE[0]).nin });
    await hosted('POST', '/selfie', { image: Buffer.from(toJpeg(cutSample('authorWebcam'))).toString('base64') });
    await hosted('POST', '/submit');
    expect((await app.request('GET', `/v1/verification_sessions/${inReview.id}`, { headers: keyed })).body.data.status).toBe('needs_review');
    for (const operation of ['adminGetSessionReview', 'adminGetSessionSelfie', 'adminDecideSessionReview']) values[`${operation}.id`] = inReview.id;
    const topUps = await sandboxTopUps(app, target.id);
    Object.assign(values, {
      'getOrganizationTopUpReceipt.reference': topUps.credited,
      'resolveTopUp.reference': topUps.flagged,
      organizationId: target.id,
      deliveryId,
      reference: nin.body.data.reference,
      'eraseVerification.reference': toErase.body.data.reference,
      id: target.id,
      environment: 'test',
      keyId: throwaway.id,
      'getPortrait.id': portrait.pathname.split('/').pop() as string,
      'getPortrait?': portrait.search.slice(1),
      'destroyOrganizationPersonalData?': `confirm=${target.id}`,
    });
    // The erased verification's portrait link stays validly signed: once erased, it answers 404.
    erasedPortraitLink = new URL(toErase.body.data.result.portraitUrl as string);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers every operation with a documented success, for each of its request examples', async () => {
    // The provider example needs upstreams that serve every active scope, as its summary says: with
    // every scope active (the default) the server refuses it on the scopes alone, the body itself valid.
    const provider = byId('setOrganizationProvider');
    const pair = provider.examples.find((example) => (example as { provider: string }).provider === 'dojah');
    const unserved = await call(provider, { body: pair });
    expect({ status: unserved.status, fields: [...new Set(unserved.body.error.details.fields.map((field: { field: string }) => field.field))] }).toEqual({
      status: 422,
      fields: ['scopes'],
    });
    // Then the example of the scopes operation, after which every example is accepted.
    expect((await call(byId('setOrganizationScopes'), { body: { scopes: ['nin', 'bvn'] } })).status).toBe(200);
    // Suspended before it is reinstated, and what erases or revokes last; the offboarding after the
    // webhook endpoints' deletion, since an offboarded organization's endpoints are gone.
    const last = [
      'suspendOrganization',
      'reinstateOrganization',
      'eraseVerification',
      'eraseDataSubject',
      'revokeApiKey',
      'deleteWebhookEndpoint',
      'adminDeleteWebhookEndpoint',
      'destroyOrganizationPersonalData',
    ];
    const ordered = [...operations.filter((operation) => !last.includes(operation.operationId)), ...last.map(byId)];
    for (const operation of ordered) {
      const bodies = operation.examples.length > 0 ? operation.examples : [undefined];
      for (const example of bodies) {
        // A session's example names a flow by an id of the document's: the flow made above instead.
        const body = operation.operationId === 'createVerificationSession' ? { ...(example as object), flowId: values.flowId } : example;
        const response = await call(operation, { body });
        // On a failure, the operation, its status and the error's code and message (which never carry personal data).
        const outcome = { operation: operation.operationId, status: response.status, error: response.body?.error };
        expect(outcome).toEqual(operation.successes.includes(response.status) ? outcome : { ...outcome, status: operation.successes });
      }
    }
    // The same funding again: 200, the wallet unchanged.
    const fundWallet = byId('fundWallet');
    expect((await call(fundWallet, { body: fundWallet.examples[0] })).status).toBe(200);
    // The offboarded organization has no key left to seal a new endpoint under: 403.
    const refused = await app.request('POST', '/v1/webhook_endpoints', { headers: { 'x-service-key': target.key }, body: { url: 'https://127.0.0.1/hooks', eventTypes: [] } });
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'personal_data_destroyed']);
  });

  it('answers the errors any request can meet: 401, 414, 422 and 431; and 400, 413 and 415 for a body', async () => {
    const headers = (operation: DocumentOperation) =>
      Object.entries(auth(operation))
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
    for (const operation of operations) {
      const path = pathOf(operation);
      if (operation.secured !== 'none') expectError(await call(operation, { headers: { 'x-service-key': '', authorization: '' } }), 401, 'unauthenticated');
      const joiner = path.includes('?') ? '&' : '?';
      expectError(await call(operation, { path: `${path}${joiner}${Array.from({ length: 17 }, (_, i) => `p${i}=1`).join('&')}` }), 422, 'validation_failed');
      expectError(await call(operation, { path: `${path}${joiner}filler=${'a'.repeat(MAX_URL_LENGTH)}` }), 414, 'uri_too_long');
      const big = await rawRequest(
        app.baseUrl,
        `${operation.method} ${path} HTTP/1.1\r\nHost: x\r\n${headers(operation)}X-Filler: ${'a'.repeat(MAX_HEADER_BYTES)}\r\nConnection: close\r\n\r\n`,
      );
      expect(openApi.check({ method: operation.method, url: path, status: big.status, contentType: big.contentType, text: big.body })).toEqual([]);
      expect(big.status).toBe(431);
      if (operation.template.includes('{')) {
        // A parameter that is not valid percent-encoding is refused before the route runs: 400 in the envelope.
        const badPath = operation.template.replace(/\{\w+\}/g, '%E0%A4%A');
        const bad = await rawRequest(app.baseUrl, `${operation.method} ${badPath} HTTP/1.1\r\nHost: x\r\n${headers(operation)}Connection: close\r\n\r\n`);
        expect(openApi.check({ method: operation.method, url: badPath, status: bad.status, contentType: bad.contentType, text: bad.body })).toEqual([]);
        expect({ operation: operation.operationId, status: bad.status }).toEqual({ operation: operation.operationId, status: 400 });
      }
      if (operation.method !== 'POST' && operation.method !== 'PUT' && operation.method !== 'PATCH') continue;
      expectError(await call(operation, { rawBody: '{"', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
      expectError(await call(operation, { rawBody: 'nin=21440414976', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
      expectError(await call(operation, { rawBody: `{"filler":"${'a'.repeat(2 * 1024 * 1024)}"}`, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
      if (operation.hasBody) expectError(await call(operation, { body: { unknownField: true } }), 422, 'validation_failed');
    }
  });

  it('answers the documented errors of checks, keys, links and admin changes', async () => {
    const nin = byId('verifyNin');
    // 502: the sandbox fails a main input ending in 2, and times out on one ending in 3.
    for (const operation of checks()) expectError(await call(operation, { body: withLastDigit(operation, '2') }), 502, 'provider_failed');
    expectError(await call(nin, { body: withLastDigit(nin, '3') }), 502, 'provider_failed');
    // 404 on every read of a thing that does not exist.
    expectError(await call(byId('getVerification'), { path: '/v1/verifications/vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR' }), 404, 'not_found');
    expectError(await call(byId('eraseVerification'), { path: '/v1/verifications/vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR/erasure' }), 404, 'not_found');
    const unknownOrganization = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
    for (const operation of operations.filter((candidate) => candidate.template.includes('/organizations/{id}'))) {
      const path = pathOf(operation).replaceAll(target.id, unknownOrganization);
      const response = await call(operation, { path, body: operation.examples[0] });
      expect({ operation: operation.operationId, status: response.status }).toEqual({ operation: operation.operationId, status: 404 });
    }
    expectError(await call(byId('revokeApiKey'), { path: '/admin/v1/keys/key_01JD3Q9ZK8W6V2C4X7N5B0M1TR' }), 404, 'not_found');
    // An unknown webhook endpoint, delivery or organization, on /v1 and the admin API alike.
    for (const operation of operations.filter((candidate) => /Webhook|LowBalance/.test(candidate.operationId) && /\{(id|organizationId)\}/.test(candidate.template))) {
      const path = operation.template
        .replace('{id}', 'whe_01JD3Q9ZK8W6V2C4X7N5B0M1TR')
        .replace('{organizationId}', 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR')
        .replace('{deliveryId}', '1')
        .replace('{environment}', 'test');
      expectError(await call(operation, { path, body: operation.examples[0] }), 404, 'not_found');
    }
    // Portrait links: altered, expired, unknown.
    const portraitPath = pathOf(byId('getPortrait'));
    expectError(await call(byId('getPortrait'), { path: portraitPath.replace(/signature=[^&]+/, `signature=${'A'.repeat(43)}`) }), 403, 'portrait_link_invalid');
    // The signature binds the expiry and the id, so an altered one is an invalid link, checked before anything is read.
    expectError(await call(byId('getPortrait'), { path: portraitPath.replace(/expires=\d+/, 'expires=1000') }), 403, 'portrait_link_invalid');
    expectError(await call(byId('getPortrait'), { path: portraitPath.replace(/\/prt_[^?]+/, `/prt_${'0'.repeat(32)}`) }), 403, 'portrait_link_invalid');
    expectError(await call(byId('getPortrait'), { path: `${erasedPortraitLink.pathname}${erasedPortraitLink.search}` }), 404, 'not_found');
    // 403: a scope not active, a key for other scopes, a live key without an upstream, a pending or suspended organization, the auditor's change.
    const narrow = await createOrganization(app, { approved: true, scopes: ['bvn'] });
    expectError(await call(nin, { body: { nin: '21440414976' }, headers: { 'x-service-key': (await issueKey(app, narrow.id)).key } }), 403, 'scope_not_active');
    const organization = await createOrganization(app, { approved: true });
    expectError(
      await call(nin, { body: { nin: '21440414976' }, headers: { 'x-service-key': (await issueKey(app, organization.id, { scopes: ['bvn'] })).key } }),
      403,
      'scope_not_allowed',
    );
    expectError(
      await call(nin, { body: { nin: '21440414976' }, headers: { 'x-service-key': (await issueKey(app, organization.id, { environment: 'live' })).key } }),
      403,
      'provider_not_configured',
    );
    const pending = await createOrganization(app);
    const pendingLive = (await issueKey(app, pending.id, { environment: 'live' })).key;
    const suspended = await createOrganization(app, { approved: true });
    const suspendedKey = (await issueKey(app, suspended.id)).key;
    expect((await app.admin('POST', `/admin/v1/organizations/${suspended.id}/suspend`, { reason: 'Unpaid invoices' })).status).toBe(200);
    // Only checks: a suspended or not yet approved organization's keys still read and erase (docs/api.md).
    for (const operation of checks()) {
      const body = operation.examples[0];
      expectError(await call(operation, { body, headers: { 'x-service-key': pendingLive } }), 403, 'organization_not_approved');
      expectError(await call(operation, { body, headers: { 'x-service-key': suspendedKey } }), 403, 'organization_suspended');
    }
    for (const operation of operations.filter((candidate) => candidate.secured === 'admin' && candidate.method !== 'GET')) {
      const response = await call(operation, { body: operation.examples[0], headers: { authorization: `Bearer ${AUDITOR_TOKEN}` } });
      expectError(response, 403, 'read_only');
    }
    // 402: a price above the balance; the check is recorded as failed and not charged.
    const poor = await createOrganization(app, { approved: true });
    const poorKey = (await issueKey(app, poor.id)).key;
    expect((await app.admin('PUT', `/admin/v1/organizations/${poor.id}/prices`, Object.fromEntries(SCOPES.map((scope) => [scope, 100_000_000])))).status).toBe(200);
    for (const operation of checks()) {
      const refused = await call(operation, { body: operation.examples[0], headers: { 'x-service-key': poorKey } });
      expectError(refused, 402, 'insufficient_balance');
      expect(refused.body.error.details).toMatchObject({ priceKobo: 100_000_000 });
    }
    // 409: a top-up resolved already (dismissed by its example above).
    expectError(await call(byId('resolveTopUp'), { body: { action: 'credit' } }), 409, 'top_up_not_resolvable');
    // 409: a funding reference reused with another amount.
    const fundWallet = byId('fundWallet');
    const conflict = await call(fundWallet, { path: `/admin/v1/organizations/${poor.id}/wallets/test/fundings`, body: { amountKobo: 100, reference: 'conformance-1' } });
    expect(conflict.status).toBe(201);
    expectError(
      await call(fundWallet, { path: `/admin/v1/organizations/${poor.id}/wallets/test/fundings`, body: { amountKobo: 200, reference: 'conformance-1' } }),
      409,
      'funding_reference_conflict',
    );
    // 429: the organization's limit of one request a minute, per key (a fresh key: the budget counts from its first request).
    expect((await app.admin('PUT', `/admin/v1/organizations/${poor.id}/rate-limit`, { requestsPerMinute: 1 })).status).toBe(200);
    const limitedKey = (await issueKey(app, poor.id)).key;
    expect((await call(byId('getWallet'), { headers: { 'x-service-key': limitedKey } })).status).toBe(200);
    for (const operation of operations.filter((candidate) => candidate.secured === 'key')) {
      expectError(await call(operation, { body: operation.examples[0], headers: { 'x-service-key': limitedKey } }), 429, 'rate_limited');
    }
    // Holds: 404 on an unknown hold or check; a hold on a subject makes its erasure 409 legal_hold until lifted.
    expectError(await call(byId('getHold'), { path: '/v1/data-subjects/holds/hld_01JD3Q9ZK8W6V2C4X7N5B0M1TR' }), 404, 'not_found');
    expectError(await call(byId('liftHold'), { path: '/v1/data-subjects/holds/hld_01JD3Q9ZK8W6V2C4X7N5B0M1TR/lift' }), 404, 'not_found');
    expectError(await call(byId('placeHold'), { body: { reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', reason: 'litigation' } }), 404, 'not_found');
    const held = await call(byId('placeHold'), { body: { subject: { nin: '57092406569' }, reason: 'litigation' } });
    expect(held.status).toBe(201);
    expectError(await call(byId('eraseDataSubject'), { body: { nin: '57092406569' } }), 409, 'legal_hold');
    expect((await call(byId('liftHold'), { path: `/v1/data-subjects/holds/${held.body.data.id}/lift` })).status).toBe(200);
    // Verification flows and sessions: unknown ids are 404; an expired session cannot be cancelled; an offboarded organization's flows cannot be opened.
    for (const operationId of [
      'getVerificationFlow',
      'publishVerificationFlowVersion',
      'createVerificationFlowLink',
      'getVerificationSession',
      'cancelVerificationSession',
      'eraseVerificationSession',
    ]) {
      const operation = byId(operationId);
      const path = operation.template.replace('{id}', operationId.includes('Flow') ? 'vfl_01JD3Q9ZK8W6V2C4X7N5B0M1TR' : 'vss_01JD3Q9ZK8W6V2C4X7N5B0M1TR');
      expectError(await call(operation, { path, body: operation.examples[0] }), 404, 'not_found');
    }
    const expiring = (await app.request('POST', '/v1/verification_sessions', { headers: { 'x-service-key': key }, body: { flowId: values.flowId, customerId: 'conformance' } }))
      .body.data as { id: string; expiresAt: string };
    const clock = app.app.get(Clock);
    const ownNow = clock.now.bind(clock);
    clock.now = () => new Date(Date.parse(expiring.expiresAt) + 1_000);
    try {
      expectError(await call(byId('cancelVerificationSession'), { path: `/v1/verification_sessions/${expiring.id}/cancel` }), 409, 'session_closed');
    } finally {
      clock.now = ownNow;
    }
    // An expired session is not in review; the one the examples decided was erased since, with its
    // data subject (a subject's erasure erases the sessions of its checks).
    const decide = byId('adminDecideSessionReview');
    expectError(await call(decide, { path: `/admin/v1/verification_sessions/${expiring.id}/review`, body: decide.examples[0] }), 409, 'session_not_in_review');
    expectError(await call(decide, { body: decide.examples[0] }), 403, 'personal_data_destroyed');
    const offboarded = { 'x-service-key': target.key };
    expectError(await call(byId('getVerificationFlow'), { path: `/v1/verification_flows/${values.targetFlowId}`, headers: offboarded }), 403, 'personal_data_destroyed');
    expectError(await call(byId('listVerificationFlows'), { headers: offboarded }), 403, 'personal_data_destroyed');
    expectError(
      await call(byId('publishVerificationFlowVersion'), {
        path: `/v1/verification_flows/${values.targetFlowId}/versions`,
        body: byId('publishVerificationFlowVersion').examples[0],
        headers: offboarded,
      }),
      403,
      'personal_data_destroyed',
    );
    expectError(await call(byId('createVerificationFlow'), { body: byId('createVerificationFlow').examples[0], headers: offboarded }), 403, 'personal_data_destroyed');
    expectError(
      await call(byId('createVerificationFlowLink'), { path: `/v1/verification_flows/${values.targetFlowId}/links`, headers: offboarded }),
      403,
      'personal_data_destroyed',
    );
    // A flow's links are bounded: past them, 409 conflict.
    let linked = await call(byId('createVerificationFlowLink'), { path: `/v1/verification_flows/${values.flowId}/links` });
    for (let made = 1; linked.status === 201 && made <= 25; made++)
      linked = await call(byId('createVerificationFlowLink'), { path: `/v1/verification_flows/${values.flowId}/links` });
    expectError(linked, 409, 'conflict');
    expectError(
      await call(byId('createVerificationSession'), { body: { flowId: values.targetFlowId, customerId: 'conformance' }, headers: offboarded }),
      403,
      'personal_data_destroyed',
    );
    // 403 personal_data_destroyed: the offboarded organization's key can run no more checks.
    for (const operation of [nin, byId('verifyBvn')])
      expectError(await call(operation, { body: operation.examples[0], headers: { 'x-service-key': target.key } }), 403, 'personal_data_destroyed');
  });

  it('answers 404 on every admin operation of an instance without an admin token, and on /metrics when it is off', async () => {
    const closed = await startTestApp({ database: app.database, validateResponses: 'strict', env: { ADMIN_TOKEN: '', METRICS_ENABLED: 'false' } });
    try {
      expectError(await closed.request('GET', '/metrics'), 404, 'not_found');
      for (const operation of operations.filter((candidate) => candidate.secured === 'admin')) {
        const response = await closed.request(operation.method, pathOf(operation), { body: operation.examples[0], headers: { authorization: `Bearer ${app.adminToken}` } });
        expectError(response, 404, 'not_found');
      }
    } finally {
      await closed.close();
    }
  });

  it('saw every operation succeed, and every documented status but those that need a broken store, a bug, a slow client or a race', () => {
    const uncovered = openApi.uncovered();
    for (const operation of operations)
      expect({ operation: operation.operationId, succeeded: operation.successes.some((status) => openApi.covered.has(`${operation.operationId} ${status}`)) }).toMatchObject({
        succeeded: true,
      });
    // 408 needs a client slower than the server's timeouts, 500 a bug, 503 an unreachable store or a projection that lags past its wait,
    // 409 `conflict`/`verification_pending` (and a hold's `conflict`) a race with another writer or a check still running (a flow's version published meanwhile, a session being decided): other suites cover them where they can be made to happen.
    const impractical =
      /^(\w+) (408|500|503)$|^(createOrganization|approveOrganization|suspendOrganization|reinstateOrganization|setOrganization\w+|destroyOrganizationPersonalData|issueApiKey|revokeApiKey|eraseVerification|(admin)?(create|update|delete|Create|Update|Delete)WebhookEndpoint|(admin)?(r|R)otateWebhookSecret|(admin)?(p|P)laceHold|(admin)?(l|L)iftHold|publishVerificationFlowVersion|eraseVerificationSession) 409$/;
    expect(uncovered.filter((pair) => !impractical.test(pair))).toEqual([]);
  });
});
