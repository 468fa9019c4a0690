import type { FieldError } from '../common/errors.js';
import type { Scope } from '../scopes/scopes.js';
import { serves } from './capabilities.js';
import { normaliseFaceMatch, normaliseRecord, type NormaliseOptions } from './normalise.js';
import { endpoint, failureForStatus, httpJson, isObject, localPhone, rawBase64, UpstreamFailure, type HttpAnswer, type UpstreamAdapter, type UpstreamAnswer } from './upstream.js';

/**
 * Dojah (https://api.dojah.io), from its public API reference (docs.dojah.io and the OpenAPI
 * document of github.com/dojah-inc/dojah-sdks): GET with the inputs as query strings, `AppId` and
 * `Authorization` (the secret key, no "Bearer") headers, answers `{"entity": {...}}` in
 * snake_case; a record that does not exist is HTTP 404 `{"error": "..."}`. Selfie checks are POST
 * JSON with the image as raw base64.
 */
export interface DojahCredentials {
  readonly appId: string;
  readonly secretKey: string;
}

type DojahRequest = { method: 'GET'; path: string; query: Record<string, string> } | { method: 'POST'; path: string; body: Record<string, string> };

export function dojahRequest(scope: Scope, input: Readonly<Record<string, string>>): DojahRequest {
  switch (scope) {
    case 'nin':
      return { method: 'GET', path: '/api/v1/kyc/nin', query: { nin: input.nin } };
    case 'pnv':
    case 'phone':
      return { method: 'GET', path: '/api/v1/kyc/phone_number', query: { phone_number: localPhone(input.phone) } };
    case 'vnin':
      return { method: 'GET', path: '/api/v1/kyc/vnin', query: { vnin: input.vnin.toUpperCase() } };
    case 'bvn':
      return { method: 'GET', path: '/api/v1/kyc/bvn/full', query: { bvn: input.bvn } };
    case 'pvc':
      return { method: 'GET', path: '/api/v1/kyc/vin', query: { vin: input.vin.toUpperCase() } };
    case 'bank_account':
      return { method: 'GET', path: '/api/v1/general/account', query: { account_number: input.account_number, bank_code: input.bank } };
    case 'premium_bank_account':
      return { method: 'GET', path: '/api/v1/kyc/nuban', query: { account_number: input.account_number, bank_code: input.bank } };
    case 'face_match':
      return input.nin !== undefined
        ? { method: 'POST', path: '/api/v1/kyc/nin/verify', body: { nin: input.nin, selfie_image: rawBase64(input.image) } }
        : { method: 'POST', path: '/api/v1/kyc/bvn/verify', body: { bvn: input.bvn, selfie_image: rawBase64(input.image) } };
    case 'passport':
      throw new Error('invariant: dojah does not serve passport (it needs the surname)');
    default: {
      const _exhaustive: never = scope;
      throw new Error(`invariant: unknown scope ${String(_exhaustive)}`);
    }
  }
}

/** What one Dojah answer means. Pure, so every documented shape (and every broken one) is unit-tested. */
export function interpretDojah(scope: Scope, answer: HttpAnswer, input: Readonly<Record<string, string>>, options: NormaliseOptions): UpstreamAnswer {
  if (answer.status === 404) return { outcome: 'not_found' };
  if (answer.status !== 200) throw failureForStatus(answer.status);
  if (!isObject(answer.json) || !isObject(answer.json.entity)) throw new UpstreamFailure('provider_malformed_response', true, true);
  const entity = answer.json.entity;
  if (scope === 'face_match') {
    const selfie = entity.selfie_verification;
    const result = isObject(selfie) ? normaliseFaceMatch(selfie.confidence_value, selfie.match) : undefined;
    if (result === undefined) throw new UpstreamFailure('provider_malformed_response', true, true);
    return { outcome: 'found', result };
  }
  const normalised = normaliseRecord(scope, entity, { input }, options);
  // An entity with nothing we recognise is not a record: failing it (uncharged) beats charging for an empty result.
  if (normalised.recognised === 0) throw new UpstreamFailure('provider_malformed_response', true, true);
  return normalised.portrait === undefined ? { outcome: 'found', result: normalised.result } : { outcome: 'found', result: normalised.result, portrait: normalised.portrait };
}

export class DojahAdapter implements UpstreamAdapter {
  readonly name = 'dojah' as const;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: DojahCredentials,
    private readonly options: () => NormaliseOptions,
  ) {}

  inputProblems(scope: Scope, input: Readonly<Record<string, string>>): FieldError[] {
    if (scope === 'premium_bank_account' && input.bank === undefined) return [{ field: 'bank', message: "is required by this organization's provider (the bank code)" }];
    return [];
  }

  async call(scope: Scope, input: Readonly<Record<string, string>>, signal: AbortSignal): Promise<UpstreamAnswer> {
    if (!serves('dojah', scope)) throw new UpstreamFailure('provider_scope_not_supported', false, false);
    const request = dojahRequest(scope, input);
    const headers: Record<string, string> = { AppId: this.credentials.appId, Authorization: this.credentials.secretKey, accept: 'application/json' };
    const answer =
      request.method === 'GET'
        ? await httpJson(endpoint(this.baseUrl, request.path, request.query), { method: 'GET', headers }, signal)
        : await httpJson(endpoint(this.baseUrl, request.path), { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(request.body) }, signal);
    return interpretDojah(scope, answer, input, this.options());
  }
}
