import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { InputFormat } from '../../src/scopes/input-formats.js';
import { registerScope } from '../../src/scopes/registry.js';
import { defineScope } from '../../src/scopes/scope-definition.js';
import { sandboxPerson, WORLD_PEOPLE } from '../../src/scopes/sandbox-world.js';
import { text } from '../../src/scopes/scope-results.js';

/**
 * A scope defined in this file only, registered the way src/scopes/registry.ts registers the
 * built-in ones, runs end to end: its route, validation, OpenAPI operation and schemas, default
 * price, sandbox answer and wallet debit all come from the definition below. It is registered
 * before the application's modules load (they are imported below, after it), as a built-in scope is.
 */
const TIN_PATTERN = /^\d{8}-\d{4}$/;
const TIN_FORMAT: InputFormat = {
  check: (value) => (TIN_PATTERN.test(value) ? null : 'must be a TIN: 8 digits, a dash and 4 digits'),
  regex: TIN_PATTERN,
  description: 'a Tax Identification Number: 8 digits, a dash and 4 digits',
  example: '20814463-0005',
};
const PRICE_KOBO = 4_200;

registerScope(
  defineScope({
    name: 'test_tin',
    summary: 'Verify a TIN (a scope of this test only)',
    description: 'Looks up a Tax Identification Number.',
    defaultPriceKobo: PRICE_KOBO,
    inputs: { tin: { required: true, format: TIN_FORMAT } },
    results: { tin: text(), taxpayerName: text('the name the TIN is registered to'), registeredOn: { kind: 'date' } },
    sandbox: {
      keyInput: (input) => input.tin ?? '',
      record: (input) => {
        const person = sandboxPerson(Number(input.tin.slice(0, 8)) % WORLD_PEOPLE);
        return { result: { tin: input.tin, taxpayerName: `${person.firstName} ${person.lastName}`, registeredOn: person.dateOfBirth } };
      },
    },
  }),
);

const { startTestApp } = await import('../support/app.js');
const { createOrganization, issueKey } = await import('../support/fixtures.js');
const { OpenApiValidator } = await import('../support/openapi-validator.js');
const { EVENT_STORE } = await import('../../src/event-store/event-store.port.js');
const { WalletLedger } = await import('../../src/wallets/wallet-ledger.port.js');
type TestApp = Awaited<ReturnType<typeof startTestApp>>;
type EventStore = import('../../src/event-store/event-store.port.js').EventStore;

describe('A scope defined in one file', () => {
  let app: TestApp;
  let store: EventStore;
  let org: { id: string };
  let key: string;
  let served: InstanceType<typeof OpenApiValidator>;

  const post = (body: unknown) => app.request('POST', '/v1/test_tin', { body, headers: { 'x-service-key': key } });
  const wallet = () => app.app.get(WalletLedger).balance({ organizationId: org.id, environment: 'test' });
  const walletEventsFor = async (reference: string) =>
    (await store.readStream(`wallet-${org.id}.test`, { maxCount: 10_000 }))
      .filter((event) => event.data.reference === reference)
      .map((event) => ({ type: event.type, scope: event.data.scope, amountKobo: event.data.amountKobo }));
  /** Every answer matches the document the running service serves (the committed one has no test_tin). */
  const conforms = (method: string, url: string, response: { status: number; headers: Headers; body: unknown }) =>
    expect(served.check({ method, url, status: response.status, contentType: response.headers.get('content-type'), text: JSON.stringify(response.body) })).toEqual([]);

  beforeAll(async () => {
    app = await startTestApp({ validateResponses: false });
    store = app.app.get<EventStore>(EVENT_STORE);
    org = await createOrganization(app);
    key = (await issueKey(app, org.id)).key;
    const docs = await app.request('GET', '/docs/json');
    expect(docs.status).toBe(200);
    served = new OpenApiValidator(docs.body);
  });
  afterAll(async () => app?.close());

  it('is documented: its operation, input schema from its rules, result schema from its fields, and in the scope lists', async () => {
    const operation = served.operation('POST', '/v1/test_tin')?.operation as unknown as Record<string, unknown>;
    expect(operation).toMatchObject({ operationId: 'verifyTestTin', summary: 'Verify a TIN (a scope of this test only)' });
    const schemas = (served.document.components as Record<string, Record<string, Record<string, unknown>>>).schemas;
    expect(schemas.TestTinInput).toEqual({
      type: 'object',
      required: ['tin'],
      properties: { tin: { type: 'string', pattern: TIN_PATTERN.source, description: TIN_FORMAT.description, example: '20814463-0005' } },
      additionalProperties: false,
    });
    expect(Object.keys(schemas.TestTinResult.properties as object)).toEqual(['tin', 'taxpayerName', 'registeredOn']);
    expect((schemas.VerificationSummary.properties as Record<string, { enum: string[] }>).scope.enum).toContain('test_tin');
  });

  it('is active for a new organization, like every scope', async () => {
    const got = await app.admin('GET', `/admin/v1/organizations/${org.id}`);
    expect(got.body.data.activeScopes).toContain('test_tin');
  });

  it('found: 201 on the sandbox, the record its sandbox makes, charged its default price from the wallet', async () => {
    const before = await wallet();
    const response = await post({ tin: '20814463-0005' });
    expect(response.status).toBe(201);
    conforms('POST', '/v1/test_tin', response);
    const data = response.body.data;
    expect(data).toMatchObject({ scope: 'test_tin', status: 'found', charged: true, priceKobo: PRICE_KOBO, request: { tin: '20814463-0005' } });
    expect(data.result).toEqual({ tin: '20814463-0005', taxpayerName: expect.stringMatching(/^\S+ \S+$/), registeredOn: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(await walletEventsFor(data.reference)).toEqual([
      { type: 'WalletFundsReserved', scope: 'test_tin', amountKobo: PRICE_KOBO },
      { type: 'WalletDebited', scope: undefined, amountKobo: PRICE_KOBO },
    ]);
    const after = await wallet();
    expect(after.balanceKobo).toBe(before.balanceKobo - PRICE_KOBO);
    expect(after.reservedKobo).toBe(0);
    const read = await app.request('GET', `/v1/verifications/${data.reference}`, { headers: { 'x-service-key': key } });
    expect(read.status).toBe(200);
    conforms('GET', `/v1/verifications/${data.reference}`, read);
    expect(read.body.data).toMatchObject({ reference: data.reference, scope: 'test_tin', status: 'found', result: data.result });
  });

  it('its sandbox key input decides: 1 not_found (charged), 2 a provider failure (not charged)', async () => {
    const before = await wallet();
    const missing = await post({ tin: '20814463-0001' });
    expect(missing.status).toBe(201);
    conforms('POST', '/v1/test_tin', missing);
    expect(missing.body.data).toMatchObject({ status: 'not_found', charged: true, result: {} });
    const failed = await post({ tin: '20814463-0002' });
    conforms('POST', '/v1/test_tin', failed);
    expect(failed.body.error).toMatchObject({ code: 'provider_failed', details: { failureReason: 'provider_error' } });
    expect((await wallet()).balanceKobo).toBe(before.balanceKobo - PRICE_KOBO);
  });

  it('validates by its rules: 422 naming the field, nothing charged', async () => {
    const before = await wallet();
    for (const body of [{}, { tin: '2081446300005' }, { tin: '20814463-0005', nin: '21440414976' }]) {
      const response = await post(body);
      expect(response.status).toBe(422);
      conforms('POST', '/v1/test_tin', response);
      expect(response.body.error.code).toBe('validation_failed');
    }
    expect((await post({ tin: '2081446-30005' })).body.error.details.fields).toEqual([{ field: 'tin', message: 'must be a TIN: 8 digits, a dash and 4 digits' }]);
    expect((await wallet()).balanceKobo).toBe(before.balanceKobo);
  });
});
