/**
 * A bounded cache of unwrapped keys: at most `maxEntries`, each for at most `ttlMs` after it was
 * put. Held in memory only.
 *
 * Ownership: `set` hands a buffer over to the cache, which from then on is its only user; `get`
 * answers a copy that belongs to the caller. So whatever the cache lets go of (expired, evicted
 * past `maxEntries`, replaced, deleted, cleared) nobody else can still be using, and it is wiped
 * at once; a key a caller holds is never wiped under it, whenever its entry expires.
 */
export class KeyCache<K, V extends Buffer> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  constructor(
    readonly maxEntries: number,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError('ttlMs must be positive');
  }

  get size(): number {
    return this.entries.size;
  }

  /** A copy of the key, the caller's to keep (and to wipe when done with it). */
  get(key: K): Buffer | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(key);
      return undefined;
    }
    // Most recently used last: a Map iterates in insertion order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return Buffer.from(entry.value);
  }

  /** Takes `value` over: the caller must not use it afterwards (keep a copy instead). */
  set(key: K, value: V): void {
    const previous = this.entries.get(key);
    this.entries.delete(key);
    if (previous !== undefined && previous.value !== value) previous.value.fill(0);
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.delete(this.entries.keys().next().value as K);
  }

  /** Drops the key and wipes the cache's bytes of it. */
  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    entry.value.fill(0);
  }

  /** Drops every key and wipes the cache's bytes of each. */
  clear(): void {
    for (const entry of this.entries.values()) entry.value.fill(0);
    this.entries.clear();
  }
}
