import type { FieldError } from '../common/errors.js';
import type { Scope } from '../scopes/scopes.js';
import { DOJAH_SCOPES, type DojahRequest } from './dojah.scopes.js';
import type { NormaliseOptions } from './normalise.js';
import { endpoint, failureForStatus, httpJson, isObject, missingInputs, UpstreamFailure, type HttpAnswer, type UpstreamAdapter, type UpstreamAnswer } from './upstream.js';

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

/** What Dojah is asked for a scope it serves (dojah.scopes.ts). */
export function dojahRequest(scope: Scope, input: Readonly<Record<string, string>>): DojahRequest {
  const mapping = DOJAH_SCOPES[scope];
  if (mapping === undefined) throw new Error(`invariant: dojah does not serve ${scope}`);
  return mapping.request(input);
}

/** What one Dojah answer means. Pure, so every documented shape (and every broken one) is unit-tested. */
export function interpretDojah(scope: Scope, answer: HttpAnswer, input: Readonly<Record<string, string>>, options: NormaliseOptions): UpstreamAnswer {
  if (answer.status === 404) return { outcome: 'not_found' };
  if (answer.status !== 200) throw failureForStatus(answer.status);
  if (!isObject(answer.json) || !isObject(answer.json.entity)) throw new UpstreamFailure('provider_malformed_response', true, true);
  // An entity with nothing we recognise is not a record: failing it (uncharged) beats charging for an empty result.
  const found = DOJAH_SCOPES[scope]?.result(answer.json.entity, input, options);
  if (found === undefined) throw new UpstreamFailure('provider_malformed_response', true, true);
  return found.portrait === undefined ? { outcome: 'found', result: found.result } : { outcome: 'found', result: found.result, portrait: found.portrait };
}

export class DojahAdapter implements UpstreamAdapter {
  readonly name = 'dojah' as const;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: DojahCredentials,
    private readonly options: () => NormaliseOptions,
  ) {}

  inputProblems(scope: Scope, input: Readonly<Record<string, string>>): FieldError[] {
    return missingInputs(DOJAH_SCOPES[scope]?.needs, input);
  }

  async call(scope: Scope, input: Readonly<Record<string, string>>, signal: AbortSignal): Promise<UpstreamAnswer> {
    if (DOJAH_SCOPES[scope] === undefined) throw new UpstreamFailure('provider_scope_not_supported', false, false);
    const request = dojahRequest(scope, input);
    const headers: Record<string, string> = { AppId: this.credentials.appId, Authorization: this.credentials.secretKey, accept: 'application/json' };
    const answer =
      request.method === 'GET'
        ? await httpJson(endpoint(this.baseUrl, request.path, request.query), { method: 'GET', headers }, signal)
        : await httpJson(
            endpoint(this.baseUrl, request.path),
            { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(request.body) },
            signal,
          );
    return interpretDojah(scope, answer, input, this.options());
  }
}
