/**
 * The webhook event types, version 1. A payload carries references, states and amounts, never
 * personal data: the receiver reads the record with its key.
 */
export const WEBHOOK_EVENT_TYPES = [
  'verification.completed',
  'verification.failed',
  'wallet.funded',
  'wallet.low_balance',
  'key.created',
  'key.revoked',
  'organization.approved',
  'organization.suspended',
  'personal_data.erased',
  'verification_session.created',
  'verification_session.submitted',
  'verification_session.approved',
  'verification_session.declined',
  'verification_session.needs_review',
  'verification_session.expired',
  'verification_session.cancelled',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}
