import { Webhook, WebhookVerificationError as SignatureError } from 'standardwebhooks';

/**
 * The events the service delivers to webhook endpoints (version 1), and `verifyWebhook`, which
 * checks a delivery's Standard Webhooks signature with the `standardwebhooks` library before its
 * body is trusted. Payloads carry references and states, never personal data: read the record
 * itself with an API key when the details are needed.
 */

/** 'test' or 'live'; null for the events of a whole organization. */
export type WebhookEnvironment = 'test' | 'live';

interface EventOf<T extends string, D, E extends WebhookEnvironment | null = WebhookEnvironment> {
  readonly type: T;
  /** When the event happened, ISO-8601 UTC. */
  readonly timestamp: string;
  readonly data: { readonly organizationId: string; readonly environment: E } & D;
}

export type VerificationCompletedEvent = EventOf<
  'verification.completed',
  { readonly reference: string; readonly scope: string; readonly status: 'found' | 'not_found'; readonly charged: true; readonly completedAt: string }
>;
export type VerificationFailedEvent = EventOf<
  'verification.failed',
  { readonly reference: string; readonly scope: string; readonly reasonCode: string; readonly charged: false; readonly failedAt: string }
>;
export type WalletFundedEvent = EventOf<'wallet.funded', { readonly fundingReference: string; readonly amountKobo: number }>;
export type WalletLowBalanceEvent = EventOf<'wallet.low_balance', { readonly balanceKobo: number; readonly thresholdKobo: number }>;
/** `scopes` null: the key may run every scope. */
export type KeyCreatedEvent = EventOf<'key.created', { readonly keyId: string; readonly prefix: string; readonly scopes: readonly string[] | null }>;
export type KeyRevokedEvent = EventOf<'key.revoked', { readonly keyId: string }>;
export type OrganizationApprovedEvent = EventOf<'organization.approved', object, null>;
export type OrganizationSuspendedEvent = EventOf<'organization.suspended', object, null>;
/** `reference` null: every verification of the organization was made unreadable at once. */
export type PersonalDataErasedEvent = EventOf<'personal_data.erased', { readonly reference: string | null; readonly erasedAt: string }>;

/** Reserved for verification flows: the service does not send these yet. */
export type VerificationSessionState = 'approved' | 'declined' | 'needs_review' | 'expired' | 'cancelled';
export type VerificationSessionEvent = {
  [S in VerificationSessionState]: EventOf<`verification_session.${S}`, { readonly sessionId: string; readonly state: S }>;
}[VerificationSessionState];

/** Every event a webhook endpoint can receive, told apart by `type`. */
export type WebhookEvent =
  | VerificationCompletedEvent
  | VerificationFailedEvent
  | WalletFundedEvent
  | WalletLowBalanceEvent
  | KeyCreatedEvent
  | KeyRevokedEvent
  | OrganizationApprovedEvent
  | OrganizationSuspendedEvent
  | PersonalDataErasedEvent
  | VerificationSessionEvent;

export type WebhookEventType = WebhookEvent['type'];

/** A delivery that must not be trusted: a bad or missing signature, a stale timestamp, a body that is not an event. */
export class WebhookVerificationError extends Error {
  readonly code = 'webhook_signature_invalid';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookVerificationError';
  }
}

/** Headers as Node's `IncomingHttpHeaders`, a plain record or Fetch `Headers`. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function signatureHeaders(headers: WebhookHeaders): Record<string, string> {
  const found: Record<string, string> = {};
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).forEach === 'function') {
    for (const name of SIGNATURE_HEADERS) {
      const value = (headers as Headers).get(name);
      if (value !== null) found[name] = value;
    }
    return found;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    const lower = name.toLowerCase();
    if (!(SIGNATURE_HEADERS as readonly string[]).includes(lower) || value === undefined) continue;
    found[lower] = typeof value === 'string' ? value : value.join(' ');
  }
  return found;
}

/**
 * Verifies a delivery and answers its event. `payload` must be the body exactly as received (the
 * raw string or bytes, not a re-serialised object). `secrets`: the endpoint's signing secret
 * (`whsec_…`), or two during a rotation's overlap (the old and the new), any of which may have
 * signed it. Refuses, with a `WebhookVerificationError`, a signature none of them made, missing
 * headers, and a timestamp more than five minutes away from now (a replay).
 */
export function verifyWebhook(payload: string | Uint8Array, headers: WebhookHeaders, secrets: string | readonly string[]): WebhookEvent {
  const candidates = typeof secrets === 'string' ? [secrets] : secrets;
  if (candidates.length === 0) throw new WebhookVerificationError('No secret to verify the delivery with');
  const signed = signatureHeaders(headers);
  let refusal: unknown;
  for (const secret of candidates) {
    let event: unknown;
    try {
      event = new Webhook(secret).verify(payload, signed);
    } catch (error) {
      // The library's own refusal, or a secret it cannot read: try the next secret; report a refusal first.
      if (!(refusal instanceof SignatureError)) refusal = error;
      continue;
    }
    if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string' || typeof (event as { data?: unknown }).data !== 'object') {
      throw new WebhookVerificationError('The signed body is not a webhook event');
    }
    return event as WebhookEvent;
  }
  const reason = refusal instanceof SignatureError ? refusal.message : 'the secret could not be read';
  throw new WebhookVerificationError(`The webhook delivery could not be verified: ${reason}`, { cause: refusal });
}
