import type { JsonObject } from '../event-store/event-store.port.js';
import { localPhone, rawBase64 } from '../scopes/input-formats.js';
import type { Scope } from '../scopes/scopes.js';
import { normaliseFaceMatch, normaliseRecord, type NormaliseOptions, type RecordScope } from './normalise.js';

/**
 * What Prembly is asked for each scope it serves, and where a found answer holds the result
 * (prembly.provider.ts has the protocol). A scope missing here is not served by Prembly.
 */
export interface PremblyRequest {
  readonly path: string;
  readonly body: Record<string, string>;
}

type Input = Readonly<Record<string, string>>;

export interface PremblyScope {
  readonly request: (input: Input) => PremblyRequest;
  /** The result in a found answer's body; undefined when it holds nothing we recognise. */
  readonly result: (body: Readonly<Record<string, unknown>>, input: Input, options: NormaliseOptions) => { result: JsonObject; portrait?: Buffer } | undefined;
  /** Inputs the scope leaves optional that Prembly needs, with what they are. */
  readonly needs?: Readonly<Record<string, string>>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Where the services put the record. */
const RECORD_FIELDS = ['nin_data', 'data', 'account_data', 'bvn_data', 'vnin_data', 'phone_data'];

/** The record under one of RECORD_FIELDS, read by the scope's normaliser: nothing recognised is no record. */
const record =
  (scope: RecordScope) =>
  (body: Readonly<Record<string, unknown>>, input: Input, options: NormaliseOptions): { result: JsonObject; portrait?: Buffer } | undefined => {
    const found = RECORD_FIELDS.map((field) => body[field]).find(isObject);
    if (found === undefined) return undefined;
    const normalised = normaliseRecord(scope, found, { input }, options);
    return normalised.recognised === 0 ? undefined : normalised;
  };

const BASE = '/identitypass/verification';
const phoneNumber = (input: Input): PremblyRequest => ({ path: `${BASE}/phone_number`, body: { number: localPhone(input.phone) } });

// pvc and passport are not served: Prembly's lookups need the state and last name, or the surname, which the scopes' inputs do not carry.
export const PREMBLY_SCOPES: { readonly [S in Scope]?: PremblyScope } = {
  nin: { request: (input) => ({ path: `${BASE}/nin`, body: { number: input.nin } }), result: record('nin') },
  pnv: { request: phoneNumber, result: record('pnv') },
  vnin: { request: (input) => ({ path: `${BASE}/vnin`, body: { number: input.vnin.toUpperCase() } }), result: record('vnin') },
  bvn: { request: (input) => ({ path: `${BASE}/bvn`, body: { number: input.bvn } }), result: record('bvn') },
  bank_account: { request: (input) => ({ path: `${BASE}/bank_account/basic`, body: { number: input.account_number, bank_code: input.bank } }), result: record('bank_account') },
  premium_bank_account: {
    request: (input) => ({ path: `${BASE}/bank_account/advance`, body: { number: input.account_number, bank_code: input.bank } }),
    result: record('premium_bank_account'),
    needs: { bank: 'the bank code' },
  },
  phone: { request: phoneNumber, result: record('phone') },
  face_match: {
    request: (input): PremblyRequest =>
      input.nin !== undefined
        ? { path: `${BASE}/nin_w_face`, body: { number: input.nin, image: rawBase64(input.image) } }
        : { path: `${BASE}/bvn_w_face`, body: { number: input.bvn, image: rawBase64(input.image) } },
    result: (body) => {
      const face = body.face_data;
      const result = isObject(face) ? normaliseFaceMatch(face.confidence ?? face.confidence_value, face.match) : undefined;
      return result === undefined ? undefined : { result };
    },
  },
};
