import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import type { JsonObject } from '../event-store/event-store.port.js';
import type { Scope } from '../scopes/scopes.js';
import { VerificationProvider, type ProviderCallOptions, type ProviderOutcome } from './provider.port.js';
import { holderOf, isoDate, NETWORKS, PLACES, resolveBank, sandboxPerson, Seed, type SandboxPerson, type WorldNumberKind } from './sandbox.world.js';
import { localPhone } from './upstream.js';

/**
 * The deterministic sandbox register behind test keys (and live keys on the embedded default).
 * The last digit of the scope's main input decides the outcome:
 *   1 not_found · 2 provider failure · 3 too slow (fails at the provider timeout)
 *   4 face_match: found with `match: false` · anything else: found.
 * A found result describes one person of the sandbox world (`sandbox.world.ts`): the owner of the
 * main input, with that person's own linked numbers, so one input always gives the same record and
 * the NIN, BVN, phones, accounts, vNIN, VIN and passport of one person all name them.
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

/** The person a record is about: the owner of the scope's main number (see `sandbox.world.ts`). */
function holder(scope: Scope, input: Readonly<Record<string, string>>): { person: SandboxPerson; slot: number } {
  const found = (kind: WorldNumberKind, number: string) => {
    const owner = holderOf(kind, number);
    return { person: sandboxPerson(owner.index), slot: owner.slot };
  };
  switch (scope) {
    case 'nin':
      return found('nin', input.nin);
    case 'pnv':
    case 'phone':
      return found('phone', localPhone(input.phone));
    case 'vnin':
      return found('vnin', input.vnin.toUpperCase());
    case 'bvn':
      return found('bvn', input.bvn);
    case 'pvc':
      return found('vin', input.vin.toUpperCase());
    case 'passport':
      return found('passport', input.passport_number.toUpperCase());
    case 'bank_account':
    case 'premium_bank_account':
      return found('account', input.account_number);
    case 'face_match':
      return input.nin !== undefined ? found('nin', input.nin) : found('bvn', input.bvn);
    default: {
      const _exhaustive: never = scope;
      throw new Error(`invariant: unknown scope ${String(_exhaustive)}`);
    }
  }
}

function names(p: SandboxPerson): JsonObject {
  return { firstName: p.firstName, middleName: p.middleName, lastName: p.lastName, gender: p.gender, dateOfBirth: p.dateOfBirth };
}

function identityRecord(p: SandboxPerson, phoneNumber: string): JsonObject {
  return { ...names(p), phoneNumber, stateOfOrigin: p.stateOfOrigin, lgaOfOrigin: p.lgaOfOrigin, residentialAddress: p.residentialAddress };
}

/** One portrait per person, so the nin, pnv and bvn records of one person show the same face. */
function portraitOf(p: SandboxPerson): Buffer {
  return sandboxPortrait(`sandbox-world:person:${p.index}`);
}

/**
 * The found record of one scope: a pure function of the scope and the input. Every record names
 * the owner of its main number, and the numbers in it (phones, NIN, BVN) are that person's own.
 */
export function sandboxRecord(scope: Scope, input: Readonly<Record<string, string>>, behaviour: SandboxBehaviour = 'found'): { result: JsonObject; portrait?: Buffer } {
  const { person: p, slot } = holder(scope, input);
  switch (scope) {
    case 'nin':
      return { result: { nin: input.nin, ...identityRecord(p, p.phones[0]) }, portrait: portraitOf(p) };
    case 'pnv':
      return { result: { nin: p.nin, ...identityRecord(p, localPhone(input.phone)) }, portrait: portraitOf(p) };
    case 'vnin':
      return { result: { vnin: input.vnin.toUpperCase(), ...names(p) } };
    case 'bvn': {
      const seed = new Seed(`sandbox-world:bvn:${p.index}`);
      const registered = 2014 + seed.int(10);
      return {
        result: {
          bvn: input.bvn,
          ...names(p),
          phoneNumber1: p.phones[0],
          phoneNumber2: p.phones[1],
          email: `${p.firstName}.${p.lastName}${seed.int(100)}@example.ng`.toLowerCase(),
          stateOfOrigin: p.stateOfOrigin,
          lgaOfOrigin: p.lgaOfOrigin,
          stateOfResidence: p.stateOfResidence,
          residentialAddress: p.residentialAddress,
          nationality: 'Nigerian',
          maritalStatus: seed.pick(['Single', 'Married', 'Married', 'Divorced', 'Widowed']),
          enrollmentBank: p.accounts[0].bankName,
          enrollmentBranch: `${seed.pick(PLACES).town} Branch`,
          registrationDate: isoDate(registered, 1 + seed.int(12), 1 + seed.int(28)),
          levelOfAccount: seed.pick(['Level 1 - Low Level Accounts', 'Level 2 - Medium Level Accounts', 'Level 3 - High Level Accounts']),
          watchListed: false,
        },
        portrait: portraitOf(p),
      };
    }
    case 'pvc': {
      const seed = new Seed(`sandbox-world:pvc:${p.index}`);
      // Voters register where they live.
      return {
        result: {
          vin: input.vin.toUpperCase(),
          ...names(p),
          occupation: seed.pick(['Trader', 'Teacher', 'Civil Servant', 'Engineer', 'Farmer', 'Student', 'Nurse', 'Accountant']),
          state: p.stateOfResidence,
          lga: p.lgaOfResidence,
          registrationArea: `Ward ${1 + seed.int(12)}`,
          pollingUnit: `PU ${String(1 + seed.int(60)).padStart(3, '0')}, ${seed.pick(['Primary School', 'Town Hall', 'Market Square', 'Health Centre'])}`,
        },
      };
    }
    case 'passport': {
      const seed = new Seed(`sandbox-world:passport:${p.index}`);
      const issuedYear = 2016 + seed.int(8);
      const issued = isoDate(issuedYear, 1 + seed.int(12), 1 + seed.int(28));
      return {
        result: {
          passportNumber: input.passport_number.toUpperCase(),
          ...names(p),
          issueDate: issued,
          expiryDate: `${issuedYear + 10}${issued.slice(4)}`,
          issuePlace: seed.pick(['Ikoyi', 'Alausa', 'Abuja', 'Kano', 'Port Harcourt', 'Enugu']),
          nationality: 'Nigerian',
        },
      };
    }
    case 'bank_account':
    case 'premium_bank_account': {
      // The holder depends on the account number alone; the bank is the one asked for, else the account's own.
      const own = p.accounts[slot];
      const bank = input.bank !== undefined ? resolveBank(input.bank) : { code: own.bankCode, name: own.bankName };
      const accountName = `${p.lastName} ${p.firstName} ${p.middleName}`.toUpperCase();
      const base: JsonObject = { accountNumber: input.account_number, accountName, bankCode: bank.code, bankName: bank.name };
      if (scope === 'bank_account') return { result: base };
      const seed = new Seed(`sandbox-world:account:${input.account_number}`);
      return {
        result: {
          ...base,
          firstName: p.firstName,
          middleName: p.middleName,
          lastName: p.lastName,
          accountType: seed.pick(['Savings', 'Current']),
          accountStatus: 'Active',
          currency: 'NGN',
          bvn: p.bvn,
        },
      };
    }
    case 'phone': {
      const phone = localPhone(input.phone);
      return { result: { phoneNumber: phone, network: NETWORKS[phone.slice(0, 4)] ?? 'MTN', nin: p.nin, ...names(p) } };
    }
    case 'face_match': {
      const seed = new Seed(`sandbox-world:face:${p.index}:${createHash('sha256').update(input.image ?? '').digest('hex')}`);
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

/** How long the sandbox takes per check (SANDBOX_LATENCY_MS): drawn evenly in [min, max]; both 0 answers at once. */
export interface SandboxLatency {
  readonly min: number;
  readonly max: number;
}

export class SandboxProvider extends VerificationProvider {
  readonly name = 'sandbox';

  constructor(private readonly latencyMs: SandboxLatency = { min: 0, max: 0 }) {
    super();
  }

  async verify(scope: Scope, input: Readonly<Record<string, string>>, options: ProviderCallOptions): Promise<ProviderOutcome> {
    const behaviour = sandboxBehaviour(scope, input);
    // Like an upstream's round trip: the answer is the same, it only comes later (a slow input hangs anyway).
    const { min, max } = this.latencyMs;
    if (max > 0 && behaviour !== 'slow') await hang(min + Math.random() * (max - min), options.signal);
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
