import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import type { JsonObject } from '../event-store/event-store.port.js';
import type { Scope } from '../scopes/scopes.js';
import { VerificationProvider, type ProviderCallOptions, type ProviderOutcome } from './provider.port.js';

/**
 * The deterministic sandbox register behind test keys (and live keys on the embedded default).
 * The last digit of the scope's main input decides the outcome:
 *   1 not_found · 2 provider failure · 3 too slow (fails at the provider timeout)
 *   4 face_match: found with `match: false` · anything else: found.
 * Everything in a found result is derived from a hash of the input, so one input always gives
 * the same record.
 */

/** The input whose last digit decides, per scope. face_match uses `nin`, else `bvn`. */
export function sandboxKeyInput(scope: Scope, input: Readonly<Record<string, string>>): string {
  switch (scope) {
    case 'nin':
      return input.nin ?? '';
    case 'pnv':
    case 'phone':
      return input.phone ?? '';
    case 'vnin':
      return input.vnin ?? '';
    case 'bvn':
      return input.bvn ?? '';
    case 'pvc':
      return input.vin ?? '';
    case 'passport':
      return input.passport_number ?? '';
    case 'bank_account':
    case 'premium_bank_account':
      return input.account_number ?? '';
    case 'face_match':
      return input.nin ?? input.bvn ?? '';
    default: {
      const _exhaustive: never = scope;
      throw new Error(`invariant: unknown scope ${String(_exhaustive)}`);
    }
  }
}

export type SandboxBehaviour = 'found' | 'not_found' | 'failure' | 'slow' | 'no_match';

export function sandboxBehaviour(scope: Scope, input: Readonly<Record<string, string>>): SandboxBehaviour {
  const key = sandboxKeyInput(scope, input);
  switch (key.slice(-1)) {
    case '1':
      return 'not_found';
    case '2':
      return 'failure';
    case '3':
      return 'slow';
    case '4':
      return scope === 'face_match' ? 'no_match' : 'found';
    default:
      return 'found';
  }
}

const FIRST_NAMES_MALE = ['Chinedu', 'Emeka', 'Oluwaseun', 'Babatunde', 'Ibrahim', 'Musa', 'Tunde', 'Obinna', 'Ikechukwu', 'Abubakar', 'Segun', 'Uche', 'Kelechi', 'Yusuf', 'Adebayo', 'Femi'];
const FIRST_NAMES_FEMALE = ['Ngozi', 'Adaeze', 'Funmilayo', 'Aisha', 'Chiamaka', 'Folake', 'Zainab', 'Amaka', 'Yetunde', 'Hauwa', 'Ifeoma', 'Bukola', 'Nneka', 'Halima', 'Temitope', 'Blessing'];
const MIDDLE_NAMES = ['Chukwuemeka', 'Oluwadamilare', 'Aminu', 'Ifeanyi', 'Olamide', 'Nnamdi', 'Abiodun', 'Ebube', 'Kehinde', 'Taiwo', 'Sani', 'Chidi'];
const LAST_NAMES = ['Okafor', 'Adeyemi', 'Bello', 'Eze', 'Ogunleye', 'Abdullahi', 'Nwosu', 'Balogun', 'Okonkwo', 'Ibrahim', 'Adebayo', 'Onyekachi', 'Suleiman', 'Olawale', 'Umeh', 'Danjuma'];
/** States with real local government areas and a town for addresses. */
const PLACES: readonly { state: string; lgas: readonly string[]; town: string }[] = [
  { state: 'Lagos', lgas: ['Ikeja', 'Surulere', 'Eti-Osa', 'Alimosho', 'Kosofe'], town: 'Lagos' },
  { state: 'Oyo', lgas: ['Ibadan North', 'Ogbomosho North', 'Oyo East', 'Egbeda'], town: 'Ibadan' },
  { state: 'Kano', lgas: ['Nassarawa', 'Fagge', 'Tarauni', 'Gwale'], town: 'Kano' },
  { state: 'Anambra', lgas: ['Awka South', 'Onitsha North', 'Nnewi North', 'Idemili North'], town: 'Awka' },
  { state: 'Enugu', lgas: ['Enugu East', 'Nsukka', 'Udi', 'Enugu North'], town: 'Enugu' },
  { state: 'Rivers', lgas: ['Port Harcourt', 'Obio/Akpor', 'Eleme', 'Ikwerre'], town: 'Port Harcourt' },
  { state: 'Kaduna', lgas: ['Kaduna North', 'Zaria', 'Chikun', 'Igabi'], town: 'Kaduna' },
  { state: 'Ogun', lgas: ['Abeokuta South', 'Ijebu Ode', 'Sagamu', 'Ado-Odo/Ota'], town: 'Abeokuta' },
  { state: 'Imo', lgas: ['Owerri Municipal', 'Orlu', 'Okigwe', 'Mbaitoli'], town: 'Owerri' },
  { state: 'FCT', lgas: ['Abuja Municipal', 'Bwari', 'Gwagwalada', 'Kuje'], town: 'Abuja' },
];
const STREETS = ['Adeola Odeku Street', 'Awolowo Road', 'Allen Avenue', 'Zik Avenue', 'Ahmadu Bello Way', 'Herbert Macaulay Way', 'Aba Road', 'Ogui Road', 'Murtala Mohammed Way', 'Bode Thomas Street'];
export const SANDBOX_BANKS: Readonly<Record<string, string>> = {
  '044': 'Access Bank',
  '011': 'First Bank of Nigeria',
  '058': 'Guaranty Trust Bank',
  '033': 'United Bank for Africa',
  '057': 'Zenith Bank',
  '070': 'Fidelity Bank',
  '214': 'First City Monument Bank',
  '032': 'Union Bank of Nigeria',
  '035': 'Wema Bank',
  '232': 'Sterling Bank',
};
const BANK_CODES = Object.keys(SANDBOX_BANKS);
const PHONE_PREFIXES = ['0803', '0806', '0813', '0816', '0703', '0706', '0805', '0807', '0815', '0802', '0808', '0812', '0809', '0817'];
const NETWORKS: Readonly<Record<string, string>> = { '0803': 'MTN', '0806': 'MTN', '0813': 'MTN', '0816': 'MTN', '0703': 'MTN', '0706': 'MTN', '0805': 'Glo', '0807': 'Glo', '0815': 'Glo', '0802': 'Airtel', '0808': 'Airtel', '0812': 'Airtel', '0809': '9mobile', '0817': '9mobile' };

/** A deterministic stream of small numbers from a hash of the input. */
class Seed {
  private bytes: Buffer;
  private index = 0;
  constructor(private readonly material: string) {
    this.bytes = createHash('sha256').update(material).digest();
  }
  next(): number {
    if (this.index + 4 > this.bytes.length) {
      this.bytes = createHash('sha256').update(this.bytes).update(this.material).digest();
      this.index = 0;
    }
    const value = this.bytes.readUInt32BE(this.index);
    this.index += 4;
    return value;
  }
  int(maxExclusive: number): number {
    return this.next() % maxExclusive;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  digits(count: number): string {
    let out = '';
    for (let i = 0; i < count; i++) out += String(this.int(10));
    return out;
  }
}

/** Local form 080XXXXXXXX of a Nigerian number, so `+234…`, `234…` and `0…` forms give one identity. */
export function localPhone(phone: string): string {
  if (phone.startsWith('+234')) return `0${phone.slice(4)}`;
  if (phone.startsWith('234')) return `0${phone.slice(3)}`;
  return phone;
}

function isoDate(year: number, month: number, day: number): string {
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

interface Person {
  firstName: string;
  middleName: string;
  lastName: string;
  gender: 'Male' | 'Female';
  dateOfBirth: string;
  phoneNumber: string;
  stateOfOrigin: string;
  lgaOfOrigin: string;
  residentialAddress: string;
  stateOfResidence: string;
}

function person(seed: Seed, phone?: string): Person {
  const gender = seed.int(2) === 0 ? 'Male' : 'Female';
  const origin = seed.pick(PLACES);
  const residence = seed.pick(PLACES);
  const year = 1960 + seed.int(46);
  return {
    firstName: seed.pick(gender === 'Male' ? FIRST_NAMES_MALE : FIRST_NAMES_FEMALE),
    middleName: seed.pick(MIDDLE_NAMES),
    lastName: seed.pick(LAST_NAMES),
    gender,
    dateOfBirth: isoDate(year, 1 + seed.int(12), 1 + seed.int(28)),
    phoneNumber: phone ?? `${seed.pick(PHONE_PREFIXES)}${seed.digits(7)}`,
    stateOfOrigin: origin.state,
    lgaOfOrigin: seed.pick(origin.lgas),
    residentialAddress: `${1 + seed.int(120)} ${seed.pick(STREETS)}, ${residence.town}, ${residence.state} State`,
    stateOfResidence: residence.state,
  };
}

function identityRecord(p: Person): JsonObject {
  return {
    firstName: p.firstName,
    middleName: p.middleName,
    lastName: p.lastName,
    gender: p.gender,
    dateOfBirth: p.dateOfBirth,
    phoneNumber: p.phoneNumber,
    stateOfOrigin: p.stateOfOrigin,
    lgaOfOrigin: p.lgaOfOrigin,
    residentialAddress: p.residentialAddress,
  };
}

/** A small, valid PNG (24×24, a colour derived from the identity): enough to exercise storage and links. */
export function sandboxPortrait(material: string): Buffer {
  const seed = new Seed(`portrait:${material}`);
  const [r, g, b] = [seed.int(256), seed.int(256), seed.int(256)];
  // The image depends on the colour only: keep the last few encoded (deflate is most of a check's
  // sandbox cost), keyed by the colour, so no identity stays in memory.
  const colour = (r << 16) | (g << 8) | b;
  let png = recentPortraits.get(colour);
  if (png === undefined) {
    png = encodePortrait(r, g, b);
    if (recentPortraits.size >= RECENT_PORTRAITS) recentPortraits.delete(recentPortraits.keys().next().value as number);
    recentPortraits.set(colour, png);
  }
  return png;
}

const RECENT_PORTRAITS = 256;
const recentPortraits = new Map<number, Buffer>();

function encodePortrait(r: number, g: number, b: number): Buffer {
  const size = 24;
  const raw = Buffer.alloc((size * 3 + 1) * size);
  for (let y = 0; y < size; y++) {
    const row = y * (size * 3 + 1);
    raw[row] = 0;
    for (let x = 0; x < size; x++) {
      const inFace = (x - 12) ** 2 + (y - 10) ** 2 < 49 || (y > 17 && Math.abs(x - 12) < 9);
      raw[row + 1 + x * 3] = inFace ? r : 235;
      raw[row + 2 + x * 3] = inFace ? g : 235;
      raw[row + 3 + x * 3] = inFace ? b : 235;
    }
  }
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed) >>> 0);
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** The found record of one scope: a pure function of the scope and the input. */
export function sandboxRecord(scope: Scope, input: Readonly<Record<string, string>>, behaviour: SandboxBehaviour = 'found'): { result: JsonObject; portrait?: Buffer } {
  switch (scope) {
    case 'nin': {
      const material = `nin:${input.nin}`;
      return { result: { nin: input.nin, ...identityRecord(person(new Seed(material))) }, portrait: sandboxPortrait(material) };
    }
    case 'pnv': {
      const phone = localPhone(input.phone);
      const material = `pnv:${phone}`;
      const seed = new Seed(material);
      const nin = `${1 + seed.int(9)}${seed.digits(10)}`;
      return { result: { nin, ...identityRecord(person(seed, phone)) }, portrait: sandboxPortrait(material) };
    }
    case 'vnin': {
      const seed = new Seed(`vnin:${input.vnin.toUpperCase()}`);
      const p = person(seed);
      return { result: { vnin: input.vnin.toUpperCase(), firstName: p.firstName, middleName: p.middleName, lastName: p.lastName, gender: p.gender, dateOfBirth: p.dateOfBirth } };
    }
    case 'bvn': {
      const material = `bvn:${input.bvn}`;
      const seed = new Seed(material);
      const p = person(seed);
      const bankCode = seed.pick(BANK_CODES);
      const registered = 2014 + seed.int(10);
      return {
        result: {
          bvn: input.bvn,
          firstName: p.firstName,
          middleName: p.middleName,
          lastName: p.lastName,
          gender: p.gender,
          dateOfBirth: p.dateOfBirth,
          phoneNumber1: p.phoneNumber,
          phoneNumber2: `${seed.pick(PHONE_PREFIXES)}${seed.digits(7)}`,
          email: `${p.firstName}.${p.lastName}${seed.int(100)}@example.ng`.toLowerCase(),
          stateOfOrigin: p.stateOfOrigin,
          lgaOfOrigin: p.lgaOfOrigin,
          stateOfResidence: p.stateOfResidence,
          residentialAddress: p.residentialAddress,
          nationality: 'Nigerian',
          maritalStatus: seed.pick(['Single', 'Married', 'Married', 'Divorced', 'Widowed']),
          enrollmentBank: SANDBOX_BANKS[bankCode],
          enrollmentBranch: `${seed.pick(PLACES).town} Branch`,
          registrationDate: isoDate(registered, 1 + seed.int(12), 1 + seed.int(28)),
          levelOfAccount: seed.pick(['Level 1 - Low Level Accounts', 'Level 2 - Medium Level Accounts', 'Level 3 - High Level Accounts']),
          watchListed: false,
        },
        portrait: sandboxPortrait(material),
      };
    }
    case 'pvc': {
      const seed = new Seed(`pvc:${input.vin.toUpperCase()}`);
      const p = person(seed);
      const place = PLACES.find((candidate) => candidate.state === p.stateOfOrigin) ?? PLACES[0];
      return {
        result: {
          vin: input.vin.toUpperCase(),
          firstName: p.firstName,
          middleName: p.middleName,
          lastName: p.lastName,
          gender: p.gender,
          dateOfBirth: p.dateOfBirth,
          occupation: seed.pick(['Trader', 'Teacher', 'Civil Servant', 'Engineer', 'Farmer', 'Student', 'Nurse', 'Accountant']),
          state: place.state,
          lga: seed.pick(place.lgas),
          registrationArea: `Ward ${1 + seed.int(12)}`,
          pollingUnit: `PU ${String(1 + seed.int(60)).padStart(3, '0')}, ${seed.pick(['Primary School', 'Town Hall', 'Market Square', 'Health Centre'])}`,
        },
      };
    }
    case 'passport': {
      const seed = new Seed(`passport:${input.passport_number.toUpperCase()}`);
      const p = person(seed);
      const issuedYear = 2016 + seed.int(8);
      const issued = isoDate(issuedYear, 1 + seed.int(12), 1 + seed.int(28));
      return {
        result: {
          passportNumber: input.passport_number.toUpperCase(),
          firstName: p.firstName,
          middleName: p.middleName,
          lastName: p.lastName,
          gender: p.gender,
          dateOfBirth: p.dateOfBirth,
          issueDate: issued,
          expiryDate: `${issuedYear + 10}${issued.slice(4)}`,
          issuePlace: seed.pick(['Ikoyi', 'Alausa', 'Abuja', 'Kano', 'Port Harcourt', 'Enugu']),
          nationality: 'Nigerian',
        },
      };
    }
    case 'bank_account':
    case 'premium_bank_account': {
      const seed = new Seed(`account:${input.bank ?? ''}:${input.account_number}`);
      const p = person(seed);
      const bankCode = input.bank !== undefined && input.bank in SANDBOX_BANKS ? input.bank : seed.pick(BANK_CODES);
      const accountName = `${p.lastName} ${p.firstName} ${p.middleName}`.toUpperCase();
      const base: JsonObject = { accountNumber: input.account_number, accountName, bankCode, bankName: SANDBOX_BANKS[bankCode] };
      if (scope === 'bank_account') return { result: base };
      return {
        result: {
          ...base,
          firstName: p.firstName,
          middleName: p.middleName,
          lastName: p.lastName,
          accountType: seed.pick(['Savings', 'Current']),
          accountStatus: 'Active',
          currency: 'NGN',
          bvn: `22${seed.digits(9)}`,
        },
      };
    }
    case 'phone': {
      const phone = localPhone(input.phone);
      const seed = new Seed(`phone:${phone}`);
      const p = person(seed, phone);
      return {
        result: {
          phoneNumber: phone,
          network: NETWORKS[phone.slice(0, 4)] ?? 'MTN',
          nin: `${1 + seed.int(9)}${seed.digits(10)}`,
          firstName: p.firstName,
          middleName: p.middleName,
          lastName: p.lastName,
          gender: p.gender,
          dateOfBirth: p.dateOfBirth,
        },
      };
    }
    case 'face_match': {
      const against = input.nin !== undefined ? `nin:${input.nin}` : `bvn:${input.bvn}`;
      const seed = new Seed(`face:${against}:${createHash('sha256').update(input.image ?? '').digest('hex')}`);
      const match = behaviour !== 'no_match';
      // Confidence in percent with one decimal: high for a match, low otherwise.
      const confidence = match ? 80 + seed.int(200) / 10 : 5 + seed.int(400) / 10;
      return { result: { match, confidence } };
    }
    default: {
      const _exhaustive: never = scope;
      throw new Error(`invariant: unknown scope ${String(_exhaustive)}`);
    }
  }
}

/** Waits until the caller gives up (or `ms` passes), like an upstream that never answers in time. */
function hang(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolveHang) => {
    if (signal.aborted) return resolveHang();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolveHang();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class SandboxProvider extends VerificationProvider {
  readonly name = 'sandbox';

  async verify(scope: Scope, input: Readonly<Record<string, string>>, options: ProviderCallOptions): Promise<ProviderOutcome> {
    const behaviour = sandboxBehaviour(scope, input);
    switch (behaviour) {
      case 'not_found':
        return { outcome: 'not_found' };
      case 'failure':
        return { outcome: 'failed', reasonCode: 'provider_error', retryable: true };
      case 'slow':
        await hang(options.timeoutMs, options.signal);
        return { outcome: 'failed', reasonCode: 'provider_timeout', retryable: true };
      case 'found':
      case 'no_match': {
        const { result, portrait } = sandboxRecord(scope, input, behaviour);
        return portrait === undefined ? { outcome: 'found', result } : { outcome: 'found', result, portrait };
      }
      default: {
        const _exhaustive: never = behaviour;
        throw new Error(`invariant: unknown sandbox behaviour ${String(_exhaustive)}`);
      }
    }
  }
}
