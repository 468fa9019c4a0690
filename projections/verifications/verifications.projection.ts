import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { asDomainEvent } from '../../src/common/event.js';
import { CATEGORIES } from '../../src/common/streams.js';
import type { VerificationEvent } from '../../src/verifications/verification.events.js';
import type { Projection, ProjectionContext } from '../projection.js';

/**
 * The `verifications` read model behind GET /v1/verifications and the recovery process. Safe to
 * apply twice: the insert does nothing on conflict, and every terminal update only moves a row
 * out of `pending`, so a replay never rewrites a finished verification.
 */
export const verificationsProjection: Projection = {
  name: 'verifications',
  categories: [CATEGORIES.verification],
  tables: ['verifications'],
  async handle(recorded: RecordedEvent, context: ProjectionContext): Promise<void> {
    const event = asDomainEvent<VerificationEvent>(recorded);
    const table = context.table('verifications');
    switch (event.type) {
      case 'VerificationRequested': {
        const d = event.data;
        await context.query(
          `insert into ${table} (reference, organization_id, environment, key_id, scope, category, country_code, status, request, result, error_message, price_kobo, charged, created_at, completed_at)
           values ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, '{}', null, $9, false, $10, null) on conflict (reference) do nothing`,
          [d.reference, d.organizationId, d.environment, d.keyId, d.scope, d.category, d.countryCode, JSON.stringify(d.request), d.priceKobo, d.requestedAt],
        );
        return;
      }
      case 'VerificationCompleted':
        await context.query(`update ${table} set status = $2, result = $3, charged = true, error_message = null, completed_at = $4 where reference = $1 and status = 'pending'`, [
          event.data.reference,
          event.data.outcome,
          JSON.stringify(event.data.result),
          event.data.completedAt,
        ]);
        return;
      case 'VerificationFailed':
        await context.query(`update ${table} set status = 'failed', error_message = $2, charged = false, completed_at = $3 where reference = $1 and status = 'pending'`, [
          event.data.reference,
          event.data.errorMessage,
          event.data.failedAt,
        ]);
        return;
      case 'VerificationRejected':
        await context.query(`update ${table} set status = 'failed', error_message = $2, charged = false, completed_at = $3 where reference = $1 and status = 'pending'`, [
          event.data.reference,
          event.data.errorMessage,
          event.data.rejectedAt,
        ]);
        return;
      default: {
        const _exhaustive: never = event;
        throw new Error(`invariant: unhandled verification event ${(_exhaustive as { type: string }).type}`);
      }
    }
  },
};
