import { hash } from 'node:crypto';
import { bankByCode, resolveBank } from './banks.js';

// The bank directory is the scopes' (the blind index names banks as the checks do).
export { bankByCode, resolveBank };

/**
 * The people behind the sandbox: a fixed world of WORLD_PEOPLE identities, each a pure function of
 * its index, with its own NIN, BVN, two phone numbers, two bank accounts, voter's card (VIN), vNIN
 * and passport. Every one of those numbers is an encoding of the index (a keyed permutation of the
 * number's format), so any of them leads back to the same person without a table. Numbers the
 * world did not hand out (made up by a caller) decode to nobody; they are given a person by
 * hashing, so they still name someone consistently, but their links lead to that person's own
 * numbers.
 *
 * Every number handed out ends in a digit the outcome rules answer `found` to, so following a
 * record's links never meets a timeout or a not-found.
 */

export const WORLD_PEOPLE = 10_000_000;

/** Last digits the sandbox answers `found` (4 is left out: face_match answers it with no match). */
export const FOUND_DIGITS: readonly string[] = ['0', '5', '6', '7', '8', '9'];

const DIGITS = '0123456789'.split('');
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');
const HEX = '0123456789ABCDEF'.split('');
const repeat = <T>(count: number, item: T): T[] => Array.from({ length: count }, () => item);

export const PHONE_PREFIXES = ['0803', '0806', '0813', '0816', '0703', '0706', '0805', '0807', '0815', '0802', '0808', '0812', '0809', '0817'];
export const NETWORKS: Readonly<Record<string, string>> = {
  '0803': 'MTN',
  '0806': 'MTN',
  '0813': 'MTN',
  '0816': 'MTN',
  '0703': 'MTN',
  '0706': 'MTN',
  '0805': 'Glo',
  '0807': 'Glo',
  '0815': 'Glo',
  '0802': 'Airtel',
  '0808': 'Airtel',
  '0812': 'Airtel',
  '0809': '9mobile',
  '0817': '9mobile',
};

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function modInverse(value: bigint, modulus: bigint): bigint {
  let [oldR, r] = [value, modulus];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % modulus) + modulus) % modulus;
}

/**
 * SHA-256 in one call: a sandbox check draws several hashes, and each `createHash` object is a
 * native handle the garbage collector must finalise (more of its time than the hashing).
 */
function sha256(material: string | Buffer): Buffer {
  return hash('sha256', material, 'buffer');
}

function hashBig(material: string): bigint {
  return BigInt(`0x${hash('sha256', material, 'hex')}`);
}

/**
 * A number format (each position a list of equally long tokens, most significant first) and a
 * keyed permutation of all the numbers it can spell (affine, digits reversed, affine again, so
 * neighbouring people get unrelated numbers): `slot + slots × index` of the world's people
 * spreads over the whole format, and only those decode back to someone.
 */
class WorldNumbers {
  private readonly radices: readonly bigint[];
  private readonly widths: readonly number[];
  private readonly space: bigint;
  private readonly rounds: readonly { multiplier: bigint; inverse: bigint; offset: bigint }[];
  readonly length: number;

  constructor(
    name: string,
    private readonly format: readonly (readonly string[])[],
    readonly slots: number,
  ) {
    this.radices = format.map((tokens) => BigInt(tokens.length));
    this.widths = format.map((tokens) => tokens[0].length);
    if (format.some((tokens, position) => tokens.some((token) => token.length !== this.widths[position]))) throw new Error(`invariant: ${name} has tokens of unequal width`);
    this.length = this.widths.reduce((sum, width) => sum + width, 0);
    this.space = this.radices.reduce((product, radix) => product * radix, 1n);
    if (this.space < BigInt(slots * WORLD_PEOPLE)) throw new Error(`invariant: ${name} cannot number ${slots} per person`);
    this.rounds = [0, 1].map((round) => {
      let multiplier = hashBig(`sandbox-world:multiplier:${name}:${round}`) % this.space;
      while (multiplier < 2n || gcd(multiplier, this.space) !== 1n) multiplier = (multiplier + 1n) % this.space;
      return { multiplier, inverse: modInverse(multiplier, this.space), offset: hashBig(`sandbox-world:offset:${name}:${round}`) % this.space };
    });
  }

  encode(index: number, slot: number): string {
    if (!Number.isSafeInteger(index) || index < 0 || index >= WORLD_PEOPLE || slot < 0 || slot >= this.slots)
      throw new Error('invariant: no such person or slot in the sandbox world');
    const [first, second] = this.rounds;
    const mixed = this.reversed(this.digitsOf((BigInt(index * this.slots + slot) * first.multiplier + first.offset) % this.space, this.radices));
    const digits = this.digitsOf((mixed * second.multiplier + second.offset) % this.space, this.radices);
    return digits.map((digit, position) => this.format[position][digit]).join('');
  }

  /** The person and slot behind a number the world handed out; undefined for any other. */
  decode(number: string): { index: number; slot: number } | undefined {
    if (number.length !== this.length) return undefined;
    const digits: number[] = [];
    let at = 0;
    for (let position = 0; position < this.format.length; position++) {
      const digit = this.format[position].indexOf(number.slice(at, at + this.widths[position]));
      if (digit < 0) return undefined;
      digits.push(digit);
      at += this.widths[position];
    }
    const [first, second] = this.rounds;
    const unmix = (value: bigint, round: { inverse: bigint; offset: bigint }) => (((((value - round.offset) % this.space) + this.space) % this.space) * round.inverse) % this.space;
    const mixed = unmix(this.valueOf(digits, this.radices), second);
    const n = Number(unmix(this.valueOf(this.digitsOf(mixed, [...this.radices].reverse()).reverse(), this.radices), first));
    if (n >= this.slots * WORLD_PEOPLE) return undefined;
    return { index: Math.floor(n / this.slots), slot: n % this.slots };
  }

  /** The digits in reverse order, read with the radices in reverse order: a bijection of the space. */
  private reversed(digits: readonly number[]): bigint {
    return this.valueOf([...digits].reverse(), [...this.radices].reverse());
  }

  private digitsOf(value: bigint, radices: readonly bigint[]): number[] {
    const digits = new Array<number>(radices.length);
    for (let position = radices.length - 1; position >= 0; position--) {
      digits[position] = Number(value % radices[position]);
      value /= radices[position];
    }
    return digits;
  }

  private valueOf(digits: readonly number[], radices: readonly bigint[]): bigint {
    return digits.reduce((value, digit, position) => value * radices[position] + BigInt(digit), 0n);
  }
}

/** The kinds of number a person has, with the formats the validator accepts (`verification-inputs.ts`). */
const NUMBERS = {
  nin: new WorldNumbers('nin', [DIGITS.slice(1), ...repeat(9, DIGITS), FOUND_DIGITS], 1),
  // BVNs start with 22.
  bvn: new WorldNumbers('bvn', [['22'], ...repeat(8, DIGITS), FOUND_DIGITS], 1),
  phone: new WorldNumbers('phone', [PHONE_PREFIXES, ...repeat(6, DIGITS), FOUND_DIGITS], 2),
  account: new WorldNumbers('account', [...repeat(9, DIGITS), FOUND_DIGITS], 2),
  vnin: new WorldNumbers('vnin', [LETTERS, LETTERS, ...repeat(13, DIGITS), FOUND_DIGITS], 1),
  vin: new WorldNumbers('vin', [...repeat(18, HEX), FOUND_DIGITS], 1),
  // Nigerian passports: A or B and eight digits.
  passport: new WorldNumbers('passport', [['A', 'B'], ...repeat(7, DIGITS), FOUND_DIGITS], 1),
} as const;

export type WorldNumberKind = keyof typeof NUMBERS;

/** Whose number this is (normalised: local phone form, upper case): its owner, or a person picked by hashing a made-up number. */
export function holderOf(kind: WorldNumberKind, number: string): { index: number; slot: number; handedOut: boolean } {
  const owner = NUMBERS[kind].decode(number);
  if (owner !== undefined) return { ...owner, handedOut: true };
  const index = sha256(`sandbox-world:made-up:${kind}:${number}`).readUIntBE(0, 6) % WORLD_PEOPLE;
  return { index, slot: 0, handedOut: false };
}

export function numberOf(kind: WorldNumberKind, index: number, slot = 0): string {
  return NUMBERS[kind].encode(index, slot);
}

/** Where people of the sandbox world keep their accounts. */
export const HOME_BANK_CODES: readonly string[] = ['044', '011', '058', '033', '057', '070', '214', '032', '035', '232', '221', '50211', '999992', '50515'];

/** A deterministic stream of small numbers from a hash of the material. */
export class Seed {
  private bytes: Buffer;
  private index = 0;
  constructor(private readonly material: string) {
    this.bytes = sha256(material);
  }
  next(): number {
    if (this.index + 4 > this.bytes.length) {
      this.bytes = sha256(Buffer.concat([this.bytes, Buffer.from(this.material, 'utf8')]));
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
}

const FIRST_NAMES_MALE = [
  'Chinedu',
  'Emeka',
  'Oluwaseun',
  'Babatunde',
  'Ibrahim',
  'Musa',
  'Tunde',
  'Obinna',
  'Ikechukwu',
  'Abubakar',
  'Segun',
  'Uche',
  'Kelechi',
  'Yusuf',
  'Adebayo',
  'Femi',
];
const FIRST_NAMES_FEMALE = [
  'Ngozi',
  'Adaeze',
  'Funmilayo',
  'Aisha',
  'Chiamaka',
  'Folake',
  'Zainab',
  'Amaka',
  'Yetunde',
  'Hauwa',
  'Ifeoma',
  'Bukola',
  'Nneka',
  'Halima',
  'Temitope',
  'Blessing',
];
const MIDDLE_NAMES = ['Chukwuemeka', 'Oluwadamilare', 'Aminu', 'Ifeanyi', 'Olamide', 'Nnamdi', 'Abiodun', 'Ebube', 'Kehinde', 'Taiwo', 'Sani', 'Chidi'];
const LAST_NAMES = [
  'Okafor',
  'Adeyemi',
  'Bello',
  'Eze',
  'Ogunleye',
  'Abdullahi',
  'Nwosu',
  'Balogun',
  'Okonkwo',
  'Ibrahim',
  'Adebayo',
  'Onyekachi',
  'Suleiman',
  'Olawale',
  'Umeh',
  'Danjuma',
];
/** States with real local government areas and a town for addresses. */
export const PLACES: readonly { state: string; lgas: readonly string[]; town: string }[] = [
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
const STREETS = [
  'Adeola Odeku Street',
  'Awolowo Road',
  'Allen Avenue',
  'Zik Avenue',
  'Ahmadu Bello Way',
  'Herbert Macaulay Way',
  'Aba Road',
  'Ogui Road',
  'Murtala Mohammed Way',
  'Bode Thomas Street',
];

export function isoDate(year: number, month: number, day: number): string {
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

export interface SandboxAccount {
  readonly accountNumber: string;
  readonly bankCode: string;
  readonly bankName: string;
}

/** One person of the sandbox world: who they are and every number that is theirs. */
export interface SandboxPerson {
  readonly index: number;
  readonly firstName: string;
  readonly middleName: string;
  readonly lastName: string;
  readonly gender: 'Male' | 'Female';
  readonly dateOfBirth: string;
  readonly stateOfOrigin: string;
  readonly lgaOfOrigin: string;
  readonly stateOfResidence: string;
  readonly lgaOfResidence: string;
  readonly residentialAddress: string;
  readonly nin: string;
  readonly bvn: string;
  /** The first is the one on the NIN record (and the BVN's phoneNumber1). */
  readonly phones: readonly [string, string];
  /** The first is at the bank where the BVN was enrolled. */
  readonly accounts: readonly [SandboxAccount, SandboxAccount];
  readonly vin: string;
  readonly vnin: string;
  readonly passportNumber: string;
}

export function sandboxPerson(index: number): SandboxPerson {
  const seed = new Seed(`sandbox-world:person:${index}`);
  const gender = seed.int(2) === 0 ? 'Male' : 'Female';
  const origin = seed.pick(PLACES);
  const residence = seed.pick(PLACES);
  const year = 1960 + seed.int(46);
  const firstName = seed.pick(gender === 'Male' ? FIRST_NAMES_MALE : FIRST_NAMES_FEMALE);
  const middleName = seed.pick(MIDDLE_NAMES);
  const lastName = seed.pick(LAST_NAMES);
  const dateOfBirth = isoDate(year, 1 + seed.int(12), 1 + seed.int(28));
  const lgaOfOrigin = seed.pick(origin.lgas);
  const lgaOfResidence = seed.pick(residence.lgas);
  const residentialAddress = `${1 + seed.int(120)} ${seed.pick(STREETS)}, ${residence.town}, ${residence.state === 'FCT' ? 'FCT' : `${residence.state} State`}`;
  const homeBank = seed.pick(HOME_BANK_CODES);
  const otherBanks = HOME_BANK_CODES.filter((code) => code !== homeBank);
  const secondBank = seed.pick(otherBanks);
  const account = (slot: number, code: string): SandboxAccount => {
    const bank = bankByCode(code);
    return { accountNumber: numberOf('account', index, slot), bankCode: bank.code, bankName: bank.name };
  };
  // A record shows one or two of a person's nine numbers, and each costs a permutation in big
  // integers: each is worked out when first read (the seed's draws above stay in their order).
  const phones = once((): readonly [string, string] => [numberOf('phone', index, 0), numberOf('phone', index, 1)]);
  const accounts = once((): readonly [SandboxAccount, SandboxAccount] => [account(0, homeBank), account(1, secondBank)]);
  const nin = once(() => numberOf('nin', index));
  const bvn = once(() => numberOf('bvn', index));
  const vin = once(() => numberOf('vin', index));
  const vnin = once(() => numberOf('vnin', index));
  const passportNumber = once(() => numberOf('passport', index));
  return {
    index,
    firstName,
    middleName,
    lastName,
    gender,
    dateOfBirth,
    stateOfOrigin: origin.state,
    lgaOfOrigin,
    stateOfResidence: residence.state,
    lgaOfResidence,
    residentialAddress,
    get nin() {
      return nin();
    },
    get bvn() {
      return bvn();
    },
    get phones() {
      return phones();
    },
    get accounts() {
      return accounts();
    },
    get vin() {
      return vin();
    },
    get vnin() {
      return vnin();
    },
    get passportNumber() {
      return passportNumber();
    },
  };
}

/** The value of `make`, made on the first call only. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** The people docs/sandbox.md lists, ready to copy: indexes into the world. */
export const READY_MADE_PEOPLE: readonly number[] = [1, 2, 6, 9, 14, 18];
