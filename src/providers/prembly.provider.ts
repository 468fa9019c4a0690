import type { FieldError } from '../common/errors.js';
import type { Scope } from '../scopes/scopes.js';
import type { NormaliseOptions } from './normalise.js';
import { PREMBLY_SCOPES, type PremblyRequest } from './prembly.scopes.js';
import { endpoint, failureForStatus, httpJson, isObject, missingInputs, UpstreamFailure, type HttpAnswer, type UpstreamAdapter, type UpstreamAnswer } from './upstream.js';

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

/** What Prembly is asked for a scope it serves (prembly.scopes.ts). */
export function premblyRequest(scope: Scope, input: Readonly<Record<string, string>>): PremblyRequest {
  const mapping = PREMBLY_SCOPES[scope];
  if (mapping === undefined) throw new Error(`invariant: prembly does not serve ${scope}`);
  return mapping.request(input);
}

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
  const found = PREMBLY_SCOPES[scope]?.result(body, input, options);
  if (found === undefined) throw new UpstreamFailure('provider_malformed_response', true, true);
  return found.portrait === undefined ? { outcome: 'found', result: found.result } : { outcome: 'found', result: found.result, portrait: found.portrait };
}

export class PremblyAdapter implements UpstreamAdapter {
  readonly name = 'prembly' as const;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: PremblyCredentials,
    private readonly options: () => NormaliseOptions,
  ) {}

  inputProblems(scope: Scope, input: Readonly<Record<string, string>>): FieldError[] {
    return missingInputs(PREMBLY_SCOPES[scope]?.needs, input);
  }

  async call(scope: Scope, input: Readonly<Record<string, string>>, signal: AbortSignal): Promise<UpstreamAnswer> {
    if (PREMBLY_SCOPES[scope] === undefined) throw new UpstreamFailure('provider_scope_not_supported', false, false);
    const request = premblyRequest(scope, input);
    const headers = { 'x-api-key': this.credentials.apiKey, 'app-id': this.credentials.appId, 'content-type': 'application/json', accept: 'application/json' };
    const answer = await httpJson(endpoint(this.baseUrl, request.path), { method: 'POST', headers, body: JSON.stringify(request.body) }, signal);
    return interpretPrembly(scope, answer, input, this.options());
  }
}
