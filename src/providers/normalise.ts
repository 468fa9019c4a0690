import type { JsonObject, JsonValue } from '../event-store/event-store.port.js';
import { MAX_PORTRAIT_BYTES } from '../portraits/portrait.store.js';
import type { Scope } from '../scopes/scopes.js';

/**
 * Upstream records in, the spec's camelCase result fields out. Pure: everything it needs (the
 * year two-digit years are read against) comes in as an argument.
 *
 * Upstreams disagree on names (`first_name`, `firstname`, `firstName`), on dates (`10-06-1993`,
 * `28-Jun-00`, `28-Jun-2000`, `10/06/1982`, ISO), on genders (`m`, `Male`, `F`), on portraits
 * (`picture`, `image`, `photo`, `base64Image`; raw base64, a data URI, base64 wrapped in newlines)
 * and on how they say "nothing here" (`""`, `"Not Available"`, `"****"`). Each result field below
 * lists every name seen upstream; the first one present wins.
 */

export interface NormaliseOptions {
  /** Two-digit years above this year's last two digits are read as 19xx. */
  readonly referenceYear: number;
}

export interface Normalised {
  readonly result: JsonObject;
  readonly portrait?: Buffer;
  /** How many result fields came from the record itself (not echoed from the input). */
  readonly recognised: number;
}

/** Values upstreams send instead of leaving a field out. */
const NONE = new Set(['', 'not available', 'n/a', 'na', 'null', 'undefined', 'nil', 'none', '****', '-']);
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const PORTRAIT_FIELDS = ['picture', 'image', 'photo', 'base64Image', 'base64_image'];

/** A flat view of one upstream record: keys without the stray trailing colons Dojah's VIN lookup sends. */
type Flat = ReadonlyMap<string, JsonValue>;

export function flatten(record: Readonly<Record<string, unknown>>): Flat {
  const flat = new Map<string, JsonValue>();
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined) continue;
    flat.set(key.replace(/:+$/, '').trim(), value as JsonValue);
  }
  return flat;
}

/** A present, meaningful string (numbers become strings); undefined for the "nothing here" values. */
export function text(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return NONE.has(trimmed.toLowerCase()) ? undefined : trimmed;
}

function pick(flat: Flat, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = text(flat.get(name));
    if (value !== undefined) return value;
  }
  return undefined;
}

function isoDate(year: number, month: number, day: number): string | undefined {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function fullYear(digits: string, referenceYear: number): number {
  if (digits.length === 4) return Number(digits);
  const twoDigits = Number(digits);
  return twoDigits > referenceYear % 100 ? 1900 + twoDigits : 2000 + twoDigits;
}

/**
 * YYYY-MM-DD from `dd-mm-yyyy`, `dd/mm/yyyy`, `dd-Mon-yy`, `dd-Mon-yyyy`, `yyyy-mm-dd` (with or
 * without a time). Numeric day-first forms are what Nigerian registers send. Anything else is
 * left out rather than guessed.
 */
export function normaliseDate(value: unknown, options: NormaliseOptions): string | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  let match = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$/.exec(raw);
  if (match !== null) return isoDate(Number(match[1]), Number(match[2]), Number(match[3]));
  match = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})$/.exec(raw);
  if (match !== null) return isoDate(Number(match[3]), Number(match[2]), Number(match[1]));
  match = /^(\d{1,2})[- ]([A-Za-z]{3})[A-Za-z]*[- ,]+(\d{2}|\d{4})$/.exec(raw);
  if (match !== null) {
    const month = MONTHS.indexOf(match[2].toLowerCase());
    if (month < 0) return undefined;
    return isoDate(fullYear(match[3], options.referenceYear), month + 1, Number(match[1]));
  }
  return undefined;
}

/** `m`, `M`, `male`, `Male` → Male; the same for Female; any other stated value is kept as sent. */
export function normaliseGender(value: unknown): string | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const lower = raw.toLowerCase();
  if (lower === 'm' || lower === 'male') return 'Male';
  if (lower === 'f' || lower === 'female') return 'Female';
  return raw;
}

/** Nigerian numbers in the local form 0XXXXXXXXXX (`234…`, `+234…` and 10-digit forms too); others kept as sent. */
export function normalisePhone(value: unknown): string | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const digits = raw.replace(/[\s()-]/g, '').replace(/^\+/, '');
  if (/^234[789]\d{9}$/.test(digits)) return `0${digits.slice(3)}`;
  if (/^[789]\d{9}$/.test(digits)) return `0${digits}`;
  return /^\d+$/.test(digits) ? digits : raw;
}

/** `YES`/`NO`, `true`/`false` → boolean. */
export function normaliseFlag(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  const raw = text(value)?.toLowerCase();
  if (raw === undefined) return undefined;
  if (raw === 'yes' || raw === 'true' || raw === 'y' || raw === '1') return true;
  if (raw === 'no' || raw === 'false' || raw === 'n' || raw === '0') return false;
  return undefined;
}

/**
 * Portrait bytes from raw base64, a `data:image/...;base64,` URI, or base64 wrapped in newlines.
 * Not base64, empty, "Not Available", or above the portrait store's bound: no portrait.
 */
export function decodePortrait(value: unknown): Buffer | undefined {
  const raw = typeof value === 'string' ? text(value) : undefined;
  if (raw === undefined) return undefined;
  const body = raw.replace(/^data:[\w/+.-]*;base64,/i, '').replace(/\s+/g, '');
  if (body.length === 0 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(body)) return undefined;
  if ((body.length / 4) * 3 > MAX_PORTRAIT_BYTES + 3) return undefined;
  const bytes = Buffer.from(body, body.includes('-') || body.includes('_') ? 'base64url' : 'base64');
  return bytes.length === 0 || bytes.length > MAX_PORTRAIT_BYTES ? undefined : bytes;
}

export function findPortrait(flat: Flat): Buffer | undefined {
  for (const name of PORTRAIT_FIELDS) {
    const portrait = decodePortrait(flat.get(name));
    if (portrait !== undefined) return portrait;
  }
  return undefined;
}

const N = {
  firstName: ['first_name', 'firstname', 'firstName', 'first_Name'],
  middleName: ['middle_name', 'middlename', 'middleName', 'other_names', 'othername', 'other_name', 'otherNames'],
  lastName: ['last_name', 'lastname', 'lastName', 'surname', 'last_Name'],
  gender: ['gender', 'sex'],
  dateOfBirth: ['date_of_birth', 'dateOfBirth', 'birth_date', 'birthdate', 'birthDate', 'formatted_dob', 'dob'],
  phoneNumber: ['phone_number', 'phoneNumber', 'telephoneno', 'telephone', 'mobile', 'msisdn', 'phone'],
  phoneNumber1: ['phone_number1', 'phoneNumber1', 'phone_number', 'phoneNumber', 'mobile'],
  phoneNumber2: ['phone_number2', 'phoneNumber2'],
  email: ['email'],
  stateOfOrigin: ['state_of_origin', 'stateOfOrigin', 'origin_state', 'self_origin_state', 'selfOriginState'],
  lgaOfOrigin: ['lga_of_origin', 'lgaOfOrigin', 'origin_lga', 'self_origin_lga', 'selfOriginLga'],
  stateOfResidence: ['state_of_residence', 'stateOfResidence', 'residence_state', 'residenceState'],
  residentialAddress: ['residential_address', 'residentialAddress', 'residence_address', 'residence_AdressLine1', 'residence_address_line1', 'residenceAddressLine1', 'address'],
  nin: ['nin', 'NIN'],
  vnin: ['vnin'],
  bvn: ['bvn', 'BVN'],
  nationality: ['nationality'],
  maritalStatus: ['marital_status', 'maritalStatus'],
  enrollmentBank: ['enrollment_bank', 'enrollmentBank'],
  enrollmentBranch: ['enrollment_branch', 'enrollmentBranch'],
  registrationDate: ['registration_date', 'registrationDate'],
  levelOfAccount: ['level_of_account', 'levelOfAccount'],
  watchListed: ['watch_listed', 'watchListed', 'watchlisted'],
  vin: ['voter_identification_number', 'vin'],
  fullName: ['full_name', 'fullName', 'fullname'],
  occupation: ['occupation'],
  state: ['state'],
  lga: ['local_government', 'lga'],
  registrationArea: ['registration_area_ward', 'registration_area', 'ward'],
  pollingUnit: ['polling_unit', 'pollingUnit'],
  pollingUnitCode: ['polling_unit_code', 'pollingUnitCode'],
  accountNumber: ['account_number', 'accountNumber'],
  accountName: ['account_name', 'accountName'],
  bankCode: ['bank_code', 'bankCode'],
  bankName: ['bank_name', 'Bank_name', 'bankName'],
  accountCurrency: ['account_currency', 'currency'],
} as const;

type Field = keyof typeof N;

class ResultBuilder {
  private readonly out: Record<string, JsonValue> = {};
  private readonly echoed = new Set<string>();
  constructor(
    private readonly flat: Flat,
    private readonly options: NormaliseOptions,
  ) {}

  text(field: Field, as: string = field): this {
    const value = pick(this.flat, N[field]);
    if (value !== undefined) this.out[as] = value;
    return this;
  }
  /** The record's value, else the input's: the identifier a caller looked up. */
  echo(field: string, names: readonly string[], fallback: string | undefined): this {
    if (field in this.out) return this;
    const value = pick(this.flat, names);
    if (value !== undefined) this.out[field] = value;
    else if (fallback !== undefined) {
      this.out[field] = fallback;
      this.echoed.add(field);
    }
    return this;
  }
  date(field: Field): this {
    for (const name of N[field]) {
      const value = normaliseDate(this.flat.get(name), this.options);
      if (value !== undefined) {
        this.out[field] = value;
        break;
      }
    }
    return this;
  }
  gender(): this {
    const value = normaliseGender(pick(this.flat, N.gender));
    if (value !== undefined) this.out.gender = value;
    return this;
  }
  phone(field: 'phoneNumber' | 'phoneNumber1' | 'phoneNumber2'): this {
    const value = normalisePhone(pick(this.flat, N[field]));
    if (value !== undefined) this.out[field] = value;
    return this;
  }
  flag(field: Field): this {
    for (const name of N[field]) {
      const value = normaliseFlag(this.flat.get(name));
      if (value !== undefined) {
        this.out[field] = value;
        break;
      }
    }
    return this;
  }
  set(field: string, value: JsonValue | undefined): this {
    if (value !== undefined) this.out[field] = value;
    return this;
  }
  identity(): this {
    return this.text('firstName').text('middleName').text('lastName').gender().date('dateOfBirth');
  }
  build(): JsonObject {
    return { ...this.out };
  }
  get recognised(): number {
    return Object.keys(this.out).filter((field) => !this.echoed.has(field)).length;
  }
}

/** The input that identifies the record, echoed in the result when the upstream leaves it out. */
export interface RecordContext {
  readonly input: Readonly<Record<string, string>>;
}

type Input = Readonly<Record<string, string>>;
const NIN_RECORD = (b: ResultBuilder): ResultBuilder =>
  b.text('nin').identity().phone('phoneNumber').text('stateOfOrigin').text('lgaOfOrigin').text('residentialAddress').text('stateOfResidence');
const BANK_ACCOUNT = (b: ResultBuilder, input: Input): ResultBuilder =>
  b.echo('accountNumber', N.accountNumber, input.account_number).text('accountName').echo('bankCode', N.bankCode, input.bank).text('bankName');

interface RecordReader {
  readonly portrait: boolean;
  readonly read: (b: ResultBuilder, input: Input, flat: Flat, options: NormaliseOptions) => void;
}

/**
 * How an upstream record of each scope reads into its result fields (src/scopes/registry/), and
 * whether it may carry a portrait. A scope answered otherwise (face_match: normaliseFaceMatch) has
 * none.
 */
const RECORD_READERS = {
  nin: { portrait: true, read: (b, input) => NIN_RECORD(b).echo('nin', N.nin, input.nin) },
  pnv: { portrait: true, read: (b) => NIN_RECORD(b) },
  phone: {
    portrait: true,
    read: (b, input) => {
      b.phone('phoneNumber').echo('phoneNumber', [], normalisePhone(input.phone)).text('nin').identity();
      b.text('stateOfOrigin').text('lgaOfOrigin').text('residentialAddress');
    },
  },
  vnin: { portrait: true, read: (b, input) => b.echo('vnin', N.vnin, input.vnin?.toUpperCase()).identity().phone('phoneNumber') },
  bvn: {
    portrait: true,
    read: (b, input) => {
      b.echo('bvn', N.bvn, input.bvn).identity().phone('phoneNumber1').phone('phoneNumber2').text('email');
      b.text('stateOfOrigin').text('lgaOfOrigin').text('stateOfResidence').text('residentialAddress').text('nationality').text('maritalStatus');
      b.text('enrollmentBank').text('enrollmentBranch').date('registrationDate').text('levelOfAccount').flag('watchListed').text('nin');
    },
  },
  pvc: {
    portrait: false,
    read: (b, input) => {
      b.echo('vin', N.vin, input.vin?.toUpperCase()).text('fullName').identity().text('occupation').text('state').text('lga');
      b.text('registrationArea').text('pollingUnit').text('pollingUnitCode');
    },
  },
  passport: {
    portrait: true,
    read: (b, input, flat, options) => {
      b.echo('passportNumber', ['passport_number', 'passportNumber', 'passport_no'], input.passport_number).identity();
      b.set('issueDate', normaliseDate(pick(flat, ['date_of_issue', 'issue_date', 'issued_date']), options));
      b.set('expiryDate', normaliseDate(pick(flat, ['expiry_date', 'expiryDate']), options))
        .set('issuePlace', pick(flat, ['issue_place', 'issuePlace']))
        .text('nationality');
    },
  },
  bank_account: { portrait: false, read: (b, input) => BANK_ACCOUNT(b, input) },
  premium_bank_account: {
    portrait: false,
    read: (b, input, flat) => {
      BANK_ACCOUNT(b, input).identity().phone('phoneNumber').text('bvn').text('accountCurrency', 'currency');
      // Dojah's NUBAN lookup carries the holder's BVN as identity_number/identity_type.
      if (pick(flat, ['identity_type'])?.toUpperCase() === 'BVN') b.set('bvn', pick(flat, ['identity_number']));
    },
  },
} satisfies { readonly [S in Scope]?: RecordReader };

/**
 * The scopes read as records: `normaliseRecord` takes only these, so an upstream's map
 * (`*.scopes.ts`) that reads a record of a scope with no reader above fails to compile.
 */
export type RecordScope = keyof typeof RECORD_READERS;
export const isRecordScope = (scope: string): scope is RecordScope => Object.hasOwn(RECORD_READERS, scope);

/**
 * One found record of `scope` in the spec's fields. `record` is the upstream's object that holds
 * the person (Dojah's `entity`, Prembly's `nin_data` / `data`); a portrait in it goes beside the
 * result, never inside.
 */
export function normaliseRecord(scope: RecordScope, record: Readonly<Record<string, unknown>>, context: RecordContext, options: NormaliseOptions): Normalised {
  const reader: RecordReader = RECORD_READERS[scope];
  const flat = flatten(record);
  const b = new ResultBuilder(flat, options);
  reader.read(b, context.input, flat, options);
  const portrait = reader.portrait ? findPortrait(flat) : undefined;
  return portrait === undefined ? { result: b.build(), recognised: b.recognised } : { result: b.build(), portrait, recognised: b.recognised };
}

/** `{match, confidence}` with confidence in percent, one decimal; `match` from the upstream when it says, else the threshold. */
export function normaliseFaceMatch(confidence: unknown, match: unknown, thresholdPercent = 90): JsonObject | undefined {
  const value = typeof confidence === 'number' ? confidence : typeof confidence === 'string' ? Number(confidence) : Number.NaN;
  if (!Number.isFinite(value) || value < 0) return undefined;
  // Some answers are 0–1, others 0–100.
  const percent = value <= 1 && value !== 0 && !Number.isInteger(value) ? value * 100 : value;
  if (percent > 100) return undefined;
  const rounded = Math.round(percent * 10) / 10;
  const stated = normaliseFlag(match);
  return { match: stated ?? rounded >= thresholdPercent, confidence: rounded };
}
