import type { FieldError } from '../common/errors.js';
import type { Scope } from '../scopes/scopes.js';
import { serves } from './capabilities.js';
import { normaliseFaceMatch, normaliseRecord, type NormaliseOptions } from './normalise.js';
import { endpoint, failureForStatus, httpJson, isObject, localPhone, rawBase64, UpstreamFailure, type HttpAnswer, type UpstreamAdapter, type UpstreamAnswer } from './upstream.js';

/**
 * Prembly IdentityPass (https://api.prembly.com), from its public documentation
 * (docs.prembly.com: the Nigeria data-verification endpoints and "Response Codes and Verification
 * Status"): POST JSON `{"number": ...}` to /identitypass/verification/{service}, `x-api-key` and
 * `app-id` headers. The outcome is in `response_code`, usually with HTTP 200: "00" found, "01"
 * record not found, "02" service unavailable (retry later), "03" insufficient wallet balance,
 * "07" BVN blocked or watch-listed. The record is under `nin_data`, `data` or `account_data`
 * depending on the service; face checks add `face_data`.
 */
export interface PremblyCredentials {
  readonly appId: string;
  readonly apiKey: string;
}

export function premblyRequest(scope: Scope, input: Readonly<Record<string, string>>): { path: string; body: Record<string, string> } {
  const base = '/identitypass/verification';
  switch (scope) {
    case 'nin':
      return { path: `${base}/nin`, body: { number: input.nin } };
    case 'pnv':
    case 'phone':
      return { path: `${base}/phone_number`, body: { number: localPhone(input.phone) } };
    case 'vnin':
      return { path: `${base}/vnin`, body: { number: input.vnin.toUpperCase() } };
    case 'bvn':
      return { path: `${base}/bvn`, body: { number: input.bvn } };
    case 'bank_account':
      return { path: `${base}/bank_account/basic`, body: { number: input.account_number, bank_code: input.bank } };
    case 'premium_bank_account':
      return { path: `${base}/bank_account/advance`, body: { number: input.account_number, bank_code: input.bank } };
    case 'face_match':
      return input.nin !== undefined
        ? { path: `${base}/nin_w_face`, body: { number: input.nin, image: rawBase64(input.image) } }
        : { path: `${base}/bvn_w_face`, body: { number: input.bvn, image: rawBase64(input.image) } };
    case 'pvc':
    case 'passport':
      throw new Error(`invariant: prembly does not serve ${scope} with the spec's inputs`);
    default: {
      const _exhaustive: never = scope;
      throw new Error(`invariant: unknown scope ${String(_exhaustive)}`);
    }
  }
}

const RECORD_FIELDS = ['nin_data', 'data', 'account_data', 'bvn_data', 'vnin_data', 'phone_data'];

function responseCode(body: Record<string, unknown>): string | undefined {
  const code = body.response_code;
  if (typeof code === 'string' && /^\d{1,2}$/.test(code.trim())) return code.trim().padStart(2, '0');
  if (typeof code === 'number' && Number.isInteger(code)) return String(code).padStart(2, '0');
  return undefined;
}

/** What one Prembly answer means. Pure, so every documented shape (and every broken one) is unit-tested. */
export function interpretPrembly(scope: Scope, answer: HttpAnswer, input: Readonly<Record<string, string>>, options: NormaliseOptions): UpstreamAnswer {
  if (answer.status >= 500) throw failureForStatus(answer.status);
  const body = isObject(answer.json) ? answer.json : undefined;
  const code = body === undefined ? undefined : responseCode(body);
  switch (code) {
    case '01':
      return { outcome: 'not_found' };
    case '02':
      throw new UpstreamFailure('provider_unavailable', true, true);
    case '03':
      throw new UpstreamFailure('provider_wallet_empty', true, false);
    case '07':
      throw new UpstreamFailure('provider_record_blocked', true, false);
    case '00':
      break;
    default:
      if (answer.status >= 400) throw failureForStatus(answer.status);
      throw new UpstreamFailure(body !== undefined && body.status === false ? 'provider_error' : 'provider_malformed_response', true, body === undefined);
  }
  if (answer.status >= 300 || body === undefined) throw new UpstreamFailure('provider_malformed_response', true, true);
  if (scope === 'face_match') {
    const face = body.face_data;
    const result = isObject(face) ? normaliseFaceMatch(face.confidence ?? face.confidence_value, face.match) : undefined;
    if (result === undefined) throw new UpstreamFailure('provider_malformed_response', true, true);
    return { outcome: 'found', result };
  }
  const record = RECORD_FIELDS.map((field) => body[field]).find(isObject);
  if (record === undefined) throw new UpstreamFailure('provider_malformed_response', true, true);
  const normalised = normaliseRecord(scope, record, { input }, options);
  if (normalised.recognised === 0) throw new UpstreamFailure('provider_malformed_response', true, true);
  return normalised.portrait === undefined ? { outcome: 'found', result: normalised.result } : { outcome: 'found', result: normalised.result, portrait: normalised.portrait };
}

export class PremblyAdapter implements UpstreamAdapter {
  readonly name = 'prembly' as const;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: PremblyCredentials,
    private readonly options: () => NormaliseOptions,
  ) {}

  inputProblems(scope: Scope, input: Readonly<Record<string, string>>): FieldError[] {
    if (scope === 'premium_bank_account' && input.bank === undefined) return [{ field: 'bank', message: "is required by this organization's provider (the bank code)" }];
    return [];
  }

  async call(scope: Scope, input: Readonly<Record<string, string>>, signal: AbortSignal): Promise<UpstreamAnswer> {
    if (!serves('prembly', scope)) throw new UpstreamFailure('provider_scope_not_supported', false, false);
    const request = premblyRequest(scope, input);
    const headers = { 'x-api-key': this.credentials.apiKey, 'app-id': this.credentials.appId, 'content-type': 'application/json', accept: 'application/json' };
    const answer = await httpJson(endpoint(this.baseUrl, request.path), { method: 'POST', headers, body: JSON.stringify(request.body) }, signal);
    return interpretPrembly(scope, answer, input, this.options());
  }
}
