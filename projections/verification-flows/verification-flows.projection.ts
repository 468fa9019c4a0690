import { asDomainEvent, occurredAt } from '../../src/common/event.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { VERIFICATION_FLOW_CATEGORY, type VerificationFlowEvent } from '../../src/verification-flows/verification-flow.events.js';
import { VERIFICATION_SESSION_CATEGORY, type VerificationSessionEvent } from '../../src/verification-flows/verification-session.events.js';
import { FLOW_VERSIONS_TABLE, FLOWS_TABLE, LINKS_TABLE, SESSIONS_TABLE, VERIFICATION_FLOWS_PROJECTION } from '../../src/verification-flows/verification-flows.read-model.js';
import { eachEvent, type Projection, type ProjectionContext } from '../projection.js';

/**
 * `verification_flows` (newest version of each flow), `verification_flow_versions` (every
 * version's sealed definition), `verification_flow_links` (the reusable links) and `verification_sessions` (each session's latest state). A
 * session row records the stream revision it applied, so a replayed event changes nothing; a flow
 * version is keyed by its number.
 */
export const verificationFlowsProjection: Projection = {
  name: VERIFICATION_FLOWS_PROJECTION,
  categories: [VERIFICATION_FLOW_CATEGORY, VERIFICATION_SESSION_CATEGORY],
  tables: [FLOWS_TABLE, FLOW_VERSIONS_TABLE, LINKS_TABLE, SESSIONS_TABLE],
  handle: eachEvent(async (recorded: RecordedEvent, context: ProjectionContext): Promise<void> => {
    const event = asDomainEvent<VerificationFlowEvent | VerificationSessionEvent>(recorded);
    const at = occurredAt(recorded);
    const revision = recorded.revision.toString();
    const sessions = context.table(SESSIONS_TABLE);
    const update = (sessionId: string, set: string, values: readonly unknown[]) =>
      context.query(`update ${sessions} set ${set}, revision = $2, updated_at = $3 where id = $1 and revision < $2`, [sessionId, revision, at, ...values]);
    switch (event.type) {
      case 'VerificationFlowCreated':
      case 'VerificationFlowVersionPublished': {
        const { flowId, organizationId, environment, version, definition } = event.data;
        await context.query(`insert into ${context.table(FLOW_VERSIONS_TABLE)} (flow_id, version, definition, created_at) values ($1, $2, $3, $4) on conflict do nothing`, [
          flowId,
          version,
          definition,
          at,
        ]);
        await context.query(
          `insert into ${context.table(FLOWS_TABLE)} (id, organization_id, environment, version, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)
           on conflict (id) do update set version = greatest(${context.table(FLOWS_TABLE)}.version, excluded.version), updated_at = excluded.updated_at`,
          [flowId, organizationId, environment, version, at],
        );
        return;
      }
      case 'VerificationFlowLinkCreated': {
        const { linkId, flowId, organizationId, environment, keyId } = event.data;
        await context.query(
          `insert into ${context.table(LINKS_TABLE)} (id, flow_id, organization_id, environment, key_id, created_at) values ($1, $2, $3, $4, $5, $6) on conflict do nothing`,
          [linkId, flowId, organizationId, environment, keyId, at],
        );
        return;
      }
      case 'VerificationSessionCreated': {
        const { sessionId, organizationId, environment, flowId, flowVersion, customer, expiresAt } = event.data;
        await context.query(
          `insert into ${sessions} (id, organization_id, environment, flow_id, flow_version, status, customer, expires_at, revision, created_at, updated_at)
           values ($1, $2, $3, $4, $5, 'created', $6, $7, $8, $9, $9) on conflict (id) do nothing`,
          [sessionId, organizationId, environment, flowId, flowVersion, JSON.stringify(customer), expiresAt, revision, at],
        );
        return;
      }
      case 'VerificationSessionConsentGiven':
        await update(event.data.sessionId, `status = 'in_progress'`, []);
        return;
      case 'VerificationSessionIdentityChecked':
        // Every check it ran: a data subject's erasure reaches the session through any of them.
        await update(event.data.sessionId, 'identity_reference = $4, identity_outcome = $5, identity_references = array_append(identity_references, $4)', [
          event.data.verificationReference,
          event.data.outcome,
        ]);
        return;
      case 'VerificationSessionSelfieCaptured':
        await update(event.data.sessionId, 'liveness = $4', [event.data.liveness ?? null]);
        return;
      case 'VerificationSessionDocumentCaptured': {
        // Each side once, however often it was retaken.
        const side = JSON.stringify([{ document: event.data.document, side: event.data.side }]);
        await update(event.data.sessionId, 'documents = case when documents @> $4::jsonb then documents else documents || $4::jsonb end', [side]);
        return;
      }
      case 'VerificationSessionSubmitted':
        await update(event.data.sessionId, `status = 'submitted', submitted_at = $3`, []);
        return;
      case 'VerificationSessionDecided':
        await update(event.data.sessionId, 'status = $4, reasons = $5, face_match_reference = $6, face_match_confidence = $7, decided_at = $3', [
          event.data.decision,
          JSON.stringify(event.data.reasons),
          event.data.faceMatchReference,
          event.data.faceMatchConfidence,
        ]);
        return;
      case 'VerificationSessionReviewed':
        await update(event.data.sessionId, 'status = $4, review_decision = $4, review_reason = $5, reviewed_by = $6, reviewed_at = $7', [
          event.data.decision,
          event.data.reason,
          event.data.reviewedBy,
          event.data.reviewedAt,
        ]);
        return;
      case 'VerificationSessionExpired':
        await update(event.data.sessionId, `status = 'expired'`, []);
        return;
      case 'VerificationSessionCancelled':
        await update(event.data.sessionId, `status = 'cancelled'`, []);
        return;
      case 'VerificationSessionPersonalDataErased':
        await update(event.data.sessionId, 'personal_data_erased_at = $4', [event.data.erasedAt]);
        return;
      default: {
        const _exhaustive: never = event;
        throw new Error(`unknown verification flow event ${(_exhaustive as { type: string }).type}`);
      }
    }
  }),
};
