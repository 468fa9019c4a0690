import type { JsonObject } from '../event-store/event-store.port.js';
import { localPhone, rawBase64 } from '../scopes/input-formats.js';
import type { Scope } from '../scopes/scopes.js';
import { normaliseFaceMatch, normaliseRecord, type Normalised, type NormaliseOptions, type RecordScope } from './normalise.js';

/**
 * What Dojah is asked for each scope it serves, and where its answer's `entity` holds the result
 * (dojah.provider.ts has the protocol). A scope missing here is not served by Dojah.
 */
export type DojahRequest = { method: 'GET'; path: string; query: Record<string, string> } | { method: 'POST'; path: string; body: Record<string, string> };

type Input = Readonly<Record<string, string>>;

export interface DojahScope {
  readonly request: (input: Input) => DojahRequest;
  /** The result in a found answer's `entity`; undefined when it holds nothing we recognise. */
  readonly result: (entity: Readonly<Record<string, unknown>>, input: Input, options: NormaliseOptions) => { result: JsonObject; portrait?: Buffer } | undefined;
  /** Inputs the scope leaves optional that Dojah needs, with what they are. */
  readonly needs?: Readonly<Record<string, string>>;
}

/** A record read by the scope's normaliser: nothing recognised is no record. */
const record =
  (scope: RecordScope) =>
  (entity: Readonly<Record<string, unknown>>, input: Input, options: NormaliseOptions): Normalised | undefined => {
    const normalised = normaliseRecord(scope, entity, { input }, options);
    return normalised.recognised === 0 ? undefined : normalised;
  };

const get = (path: string, query: Record<string, string>): DojahRequest => ({ method: 'GET', path, query });
const phoneNumber = (input: Input): DojahRequest => get('/api/v1/kyc/phone_number', { phone_number: localPhone(input.phone) });

// passport is not served: Dojah's lookup needs the surname, which the scope's inputs do not carry.
export const DOJAH_SCOPES: { readonly [S in Scope]?: DojahScope } = {
  nin: { request: (input) => get('/api/v1/kyc/nin', { nin: input.nin }), result: record('nin') },
  pnv: { request: phoneNumber, result: record('pnv') },
  vnin: { request: (input) => get('/api/v1/kyc/vnin', { vnin: input.vnin.toUpperCase() }), result: record('vnin') },
  bvn: { request: (input) => get('/api/v1/kyc/bvn/full', { bvn: input.bvn }), result: record('bvn') },
  pvc: { request: (input) => get('/api/v1/kyc/vin', { vin: input.vin.toUpperCase() }), result: record('pvc') },
  bank_account: { request: (input) => get('/api/v1/general/account', { account_number: input.account_number, bank_code: input.bank }), result: record('bank_account') },
  premium_bank_account: {
    request: (input) => get('/api/v1/kyc/nuban', { account_number: input.account_number, bank_code: input.bank }),
    result: record('premium_bank_account'),
    needs: { bank: 'the bank code' },
  },
  phone: { request: phoneNumber, result: record('phone') },
  face_match: {
    request: (input): DojahRequest =>
      input.nin !== undefined
        ? { method: 'POST', path: '/api/v1/kyc/nin/verify', body: { nin: input.nin, selfie_image: rawBase64(input.image) } }
        : { method: 'POST', path: '/api/v1/kyc/bvn/verify', body: { bvn: input.bvn, selfie_image: rawBase64(input.image) } },
    result: (entity) => {
      const selfie = entity.selfie_verification;
      if (typeof selfie !== 'object' || selfie === null || Array.isArray(selfie)) return undefined;
      const { confidence_value: confidence, match } = selfie as Record<string, unknown>;
      const result = normaliseFaceMatch(confidence, match);
      return result === undefined ? undefined : { result };
    },
  },
};
