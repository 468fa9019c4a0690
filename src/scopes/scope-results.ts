import type { Scope } from './scopes.js';

/**
 * The result fields each scope may answer, whichever provider ran it: what the normaliser
 * (src/providers/normalise.ts) and the sandbox write, and the portrait link the service adds. Every
 * field may be absent (an upstream may not have it; a not-found result is `{}`). The OpenAPI
 * document's result schemas are made from this list, and tests check the normaliser and the sandbox
 * against it.
 */
export type ResultFieldKind =
  /** A string as the register holds it. */
  | 'text'
  /** `YYYY-MM-DD`. */
  | 'date'
  /** `Male`, `Female`, or another value as the register sent it. */
  | 'gender'
  /** A phone number in the local `080…` form when Nigerian, else as sent. */
  | 'phone'
  | 'boolean'
  /** A number from 0 to 100. */
  | 'percent'
  /** The signed portrait link. */
  | 'url'
  /** When the portrait link stops working (ISO 8601). */
  | 'timestamp';

export interface ResultField {
  readonly kind: ResultFieldKind;
  readonly description?: string;
}

const text = (description?: string): ResultField => (description === undefined ? { kind: 'text' } : { kind: 'text', description });
const NAMES = { firstName: text(), middleName: text(), lastName: text() } as const;
const IDENTITY = { ...NAMES, gender: { kind: 'gender' }, dateOfBirth: { kind: 'date' } } as const satisfies Record<string, ResultField>;
const PORTRAIT = {
  portraitUrl: { kind: 'url', description: 'a signed link to the portrait (GET /v1/portraits/{id}); each read of the verification signs a fresh one' },
  portraitUrlExpiresAt: { kind: 'timestamp', description: 'when portraitUrl stops working' },
} as const satisfies Record<string, ResultField>;
const NIN_RECORD = {
  nin: text('the NIN of the record'),
  ...IDENTITY,
  phoneNumber: { kind: 'phone' },
  stateOfOrigin: text(),
  lgaOfOrigin: text(),
  residentialAddress: text(),
  stateOfResidence: text(),
  ...PORTRAIT,
} as const satisfies Record<string, ResultField>;
const BANK_ACCOUNT = { accountNumber: text(), accountName: text(), bankCode: text(), bankName: text() } as const;

export const SCOPE_RESULT_FIELDS: Readonly<Record<Scope, Readonly<Record<string, ResultField>>>> = {
  nin: NIN_RECORD,
  pnv: NIN_RECORD,
  vnin: { vnin: text(), ...IDENTITY, phoneNumber: { kind: 'phone' }, ...PORTRAIT },
  bvn: {
    bvn: text(),
    ...IDENTITY,
    phoneNumber1: { kind: 'phone' },
    phoneNumber2: { kind: 'phone' },
    email: text(),
    stateOfOrigin: text(),
    lgaOfOrigin: text(),
    stateOfResidence: text(),
    residentialAddress: text(),
    nationality: text(),
    maritalStatus: text(),
    enrollmentBank: text(),
    enrollmentBranch: text(),
    registrationDate: { kind: 'date' },
    levelOfAccount: text(),
    watchListed: { kind: 'boolean' },
    nin: text('the NIN linked to the BVN'),
    ...PORTRAIT,
  },
  pvc: {
    vin: text(),
    fullName: text(),
    ...IDENTITY,
    occupation: text(),
    state: text(),
    lga: text(),
    registrationArea: text(),
    pollingUnit: text(),
    pollingUnitCode: text(),
  },
  passport: { passportNumber: text(), ...IDENTITY, issueDate: { kind: 'date' }, expiryDate: { kind: 'date' }, issuePlace: text(), nationality: text(), ...PORTRAIT },
  bank_account: BANK_ACCOUNT,
  premium_bank_account: {
    ...BANK_ACCOUNT,
    ...IDENTITY,
    phoneNumber: { kind: 'phone' },
    bvn: text("the account holder's BVN"),
    currency: text(),
    accountType: text(),
    accountStatus: text(),
  },
  phone: {
    phoneNumber: { kind: 'phone' },
    network: text(),
    nin: text('the NIN linked to the phone number'),
    ...IDENTITY,
    stateOfOrigin: text(),
    lgaOfOrigin: text(),
    residentialAddress: text(),
    ...PORTRAIT,
  },
  face_match: {
    match: { kind: 'boolean', description: 'whether the image shows the person on file' },
    confidence: { kind: 'percent', description: 'how alike, 0 to 100, one decimal' },
  },
};
