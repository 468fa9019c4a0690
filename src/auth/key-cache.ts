import { Injectable } from '@nestjs/common';

/**
 * How long an instance trusts what it last read about a key and its organization. Revocation,
 * suspension and scope changes made through this instance clear the cache at once
 * (`OrganizationStore` calls `invalidate` once the read models have the change); made elsewhere
 * (another instance, the CLI) they take effect here within this TTL of the read models applying
 * them. The CLI waits it out before saying a change is in force everywhere (docs/operations.md).
 */
export const KEY_CACHE_TTL_MS = 250;
/** Bound on the entries kept; the whole cache is dropped when it is full (a TTL this short refills it cheaply). */
const MAX_ENTRIES = 10_000;

/**
 * Recently authenticated keys, by key hash, in this process: one read-model query per key and
 * TTL instead of one per request. Only keys found are cached, so unknown keys cannot fill it.
 */
@Injectable()
export class AuthenticatedKeyCache<T = unknown> {
  private entries = new Map<string, { value: T; expiresAtMs: number }>();
  /** Moves on each invalidate: a read that started before it must not fill the cache after it. */
  private generationCount = 0;

  get generation(): number {
    return this.generationCount;
  }

  get(keyHash: string, nowMs: number): T | undefined {
    const entry = this.entries.get(keyHash);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= nowMs) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return entry.value;
  }

  /** `generation`: the cache's generation when the value was read; a value read before an invalidate is dropped. */
  set(keyHash: string, value: T, nowMs: number, generation: number = this.generationCount): void {
    if (generation !== this.generationCount) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(keyHash, { value, expiresAtMs: nowMs + KEY_CACHE_TTL_MS });
  }

  /** Forget everything: the next request of every key reads the read model again. */
  invalidate(): void {
    this.generationCount += 1;
    this.entries = new Map();
  }
}
