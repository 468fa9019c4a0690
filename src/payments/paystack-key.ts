import type { Clock } from '../common/clock.js';
import { ValidationFailed } from '../common/errors.js';
import type { CommandContext, Event } from '../common/event.js';
import type { IdGenerator } from '../common/ids.js';
import type { Decider, EventMeta } from '../event-sourcing/decider.js';
import { EventSourcedHandler } from '../event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../event-sourcing/retry.js';
import type { EventStore } from '../event-store/event-store.port.js';
import type { CredentialsBinding, CredentialsCipher } from '../providers/credentials.js';

const SCHEMA_VERSION = 1;

/**
 * The deployment's Paystack secret key, set by an operator: sealed (AES-256-GCM under the
 * provider credentials' key, bound to this use) with its last four characters beside it for
 * operators to recognise. The log never holds the key in clear.
 */
export type PaystackKeySet = Event<'PaystackKeySet', { sealedKey: string; mode: 'live' | 'test'; last4: string }>;
export const PAYMENT_RAIL_CATEGORY = 'paymentRail';
export const PAYSTACK_KEY_STREAM = `${PAYMENT_RAIL_CATEGORY}-paystack`;

/** What the sealed key is bound to: copied onto an organization's provider credentials, it does not open. */
const BINDING: CredentialsBinding = { organizationId: 'deployment', environment: 'payments', role: 'primary', provider: 'paystack' };

/** Paystack's secret keys: `sk_live_…` or `sk_test_…` (40 hex characters after the prefix today; any letters and digits accepted). */
export const PAYSTACK_SECRET_KEY = /^sk_(live|test)_[A-Za-z0-9]{16,200}$/;

/** How long an instance trusts the key it read: another instance's change is in force here within this. */
export const PAYSTACK_KEY_CACHE_MS = 5_000;
/** A fresh read is asked for by a signature that did not match: forged webhooks cannot make more than ten reads of the log a second. */
const FRESH_READ_MS = 100;

export interface PaystackKeyState {
  readonly sealedKey: string | null;
  readonly mode: 'live' | 'test' | null;
  readonly last4: string | null;
  readonly setAt: string | null;
}

export type SetPaystackKey = { readonly type: 'SetPaystackKey'; readonly sealedKey: string; readonly mode: 'live' | 'test'; readonly last4: string };

export const paystackKeyDecider: Decider<PaystackKeyState, SetPaystackKey, PaystackKeySet> = {
  initialState: { sealedKey: null, mode: null, last4: null, setAt: null },
  decide: (command) => [{ type: 'PaystackKeySet', data: { sealedKey: command.sealedKey, mode: command.mode, last4: command.last4, schemaVersion: SCHEMA_VERSION } }],
  evolve: (_state, event, meta: EventMeta) => ({ sealedKey: event.data.sealedKey, mode: event.data.mode, last4: event.data.last4, setAt: meta.occurredAt.toISOString() }),
};

/** What operators see of the key: never the key. `environment`: PAYSTACK_SECRET_KEY, in force while no key was set through the admin API. */
export interface PaystackKeyView {
  readonly configured: boolean;
  readonly source: 'sealed' | 'environment' | null;
  readonly mode: 'live' | 'test' | null;
  readonly last4: string | null;
  readonly setAt: string | null;
}

/** A secret key from a request body: `{secretKey}` and nothing else, in Paystack's form. Never echoes the value. */
export function paystackKeyOf(body: unknown): string {
  const input = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const errors = Object.keys(input)
    .filter((field) => field !== 'secretKey')
    .map((field) => ({ field: field.slice(0, 50), message: 'is not a field of the Paystack key' }));
  const key = input.secretKey;
  if (typeof key !== 'string' || !PAYSTACK_SECRET_KEY.test(key))
    errors.push({ field: 'secretKey', message: "must be a Paystack secret key (sk_live_… or sk_test_…, from Paystack's dashboard)" });
  if (errors.length > 0) throw new ValidationFailed(errors);
  return key as string;
}

const modeOf = (key: string): 'live' | 'test' => (key.startsWith('sk_live_') ? 'live' : 'test');

/**
 * The Paystack secret key in force: the one an operator set last (sealed on `paymentRail-paystack`),
 * else PAYSTACK_SECRET_KEY, else none (live top-ups off). Read from the log at most every
 * PAYSTACK_KEY_CACHE_MS, so a key set on one instance is used by all within that time, and a
 * webhook signed under the new key is checked against the log at once rather than refused.
 */
export class PaystackKeySource {
  private readonly handler: EventSourcedHandler<PaystackKeyState, SetPaystackKey, PaystackKeySet>;
  private cached: { key: string | undefined; view: PaystackKeyView; readAt: number } | undefined;
  private reading: Promise<{ key: string | undefined; view: PaystackKeyView }> | undefined;

  constructor(
    store: EventStore,
    /** Opened when a sealed key is first read or set (a CLI run with no sealed key never opens, nor creates, the credentials key). */
    private readonly cipher: () => Promise<CredentialsCipher>,
    private readonly clock: Clock,
    ids: IdGenerator,
    private readonly fromEnvironment: string | undefined,
  ) {
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: linearJitter(10, 5), paging: { pageSize: 100, maxPages: 100 } });
  }

  /** The key in force, or undefined when none is: `fresh` reads the log now (a signature that did not match the cached key). */
  async current(fresh = false): Promise<string | undefined> {
    return (await this.load(fresh)).key;
  }

  async view(): Promise<PaystackKeyView> {
    return (await this.load(false)).view;
  }

  /** Seals and records the key; in force on this instance at once. */
  async set(key: string, context: CommandContext): Promise<PaystackKeyView> {
    const sealedKey = (await this.cipher()).encrypt({ secretKey: key }, BINDING);
    await this.handler.handle({ id: PAYSTACK_KEY_STREAM, decider: paystackKeyDecider }, { type: 'SetPaystackKey', sealedKey, mode: modeOf(key), last4: key.slice(-4) }, context);
    this.cached = undefined;
    return this.view();
  }

  private async load(fresh: boolean): Promise<{ key: string | undefined; view: PaystackKeyView }> {
    const now = this.clock.now().getTime();
    if (this.cached !== undefined && now - this.cached.readAt < (fresh ? FRESH_READ_MS : PAYSTACK_KEY_CACHE_MS)) return this.cached;
    // Concurrent callers share one read of the log.
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    const read = await this.reading;
    this.cached = { ...read, readAt: now };
    return read;
  }

  private async read(): Promise<{ key: string | undefined; view: PaystackKeyView }> {
    const { state } = await this.handler.read({ id: PAYSTACK_KEY_STREAM, decider: paystackKeyDecider });
    if (state.sealedKey !== null) {
      // A key sealed under another PROVIDER_CREDENTIALS_KEY does not open: thrown, never replaced by the environment's.
      const key = (await this.cipher()).decrypt(state.sealedKey, BINDING).secretKey;
      if (key === undefined) throw new Error('the sealed Paystack key holds no secret key');
      return { key, view: { configured: true, source: 'sealed', mode: state.mode, last4: state.last4, setAt: state.setAt } };
    }
    const key = this.fromEnvironment;
    if (key === undefined) return { key, view: { configured: false, source: null, mode: null, last4: null, setAt: null } };
    return { key, view: { configured: true, source: 'environment', mode: modeOf(key), last4: key.slice(-4), setAt: null } };
  }
}
