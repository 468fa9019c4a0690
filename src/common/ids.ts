import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Id generation as an injectable port. References are ULIDs: unique, sortable by creation time, URL-safe. */
export abstract class IdGenerator {
  /** Event ids (UUID v4, as EventStoreDB requires). */
  abstract eventId(): string;
  /** Verification references: `vrf_` + 26-character ULID, e.g. `vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR`. */
  abstract reference(): string;
  /** Organization ids: `org_` + ULID. */
  abstract organizationId(): string;
  /** API key ids: `key_` + ULID. */
  abstract keyId(): string;
  /** Secret random bytes, base64url (API keys, tokens). */
  abstract secret(bytes: number): string;
}

/**
 * ulid's PRNG: a number in [0, 1) from the system CSPRNG, drawn from a buffer refilled 4 KiB at a
 * time. ulid's default asks crypto for one byte per character, sixteen calls per id.
 */
export function bufferedCryptoPrng(): () => number {
  const pool = new Uint32Array(1_024);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    return pool[next++] / 2 ** 32;
  };
}

export class RandomIdGenerator extends IdGenerator {
  private readonly ulid = monotonicFactory(bufferedCryptoPrng());
  eventId(): string {
    return randomUUID();
  }
  reference(): string {
    return `vrf_${this.ulid()}`;
  }
  organizationId(): string {
    return `org_${this.ulid()}`;
  }
  keyId(): string {
    return `key_${this.ulid()}`;
  }
  secret(bytes: number): string {
    return randomBytes(bytes).toString('base64url');
  }
}
