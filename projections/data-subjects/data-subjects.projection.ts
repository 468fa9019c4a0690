import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { asDomainEvent, occurredAt } from '../../src/common/event.js';
import { DATA_SUBJECT_CATEGORIES, type DataHoldEvent, type DataRequestEvent } from '../../src/verifications/data-subject.events.js';
import { DATA_SUBJECTS_PROJECTION, DATA_SUBJECTS_TABLES } from '../../src/verifications/data-subject.read-model.js';
import { eachEvent, type Projection, type ProjectionContext } from '../projection.js';

/** The metadata's actor (every event this service writes has one). */
function actorOf(recorded: RecordedEvent): { type: string; id: string } {
  const actor = recorded.metadata.actor as { type?: unknown; id?: unknown } | undefined;
  return { type: typeof actor?.type === 'string' ? actor.type : 'system', id: typeof actor?.id === 'string' ? actor.id : 'unknown' };
}

/**
 * The `data-subjects` read model: holds (`data_holds`) and the record of exports and erasures
 * (`data_requests`). Inserts do nothing on conflict and a lift keeps the first lift's time and
 * actor, so applying an event twice leaves the same rows.
 */
export const dataSubjectsProjection: Projection = {
  name: DATA_SUBJECTS_PROJECTION,
  categories: [DATA_SUBJECT_CATEGORIES.hold, DATA_SUBJECT_CATEGORIES.request],
  tables: DATA_SUBJECTS_TABLES,
  handle: eachEvent(async (recorded: RecordedEvent, context: ProjectionContext): Promise<void> => {
    const event = asDomainEvent<DataHoldEvent | DataRequestEvent>(recorded);
    const actor = actorOf(recorded);
    switch (event.type) {
      case 'DataHoldPlaced': {
        const data = event.data;
        await context.query(
          `insert into ${context.table('data_holds')} (id, organization_id, environment, reference, subject_kind, masked_identifier, subject_token, reason, until, placed_at, placed_by_type, placed_by_id)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict (id) do nothing`,
          [
            data.holdId,
            data.organizationId,
            data.environment,
            data.reference,
            data.subjectKind,
            data.maskedIdentifier,
            data.subjectToken,
            data.reason,
            data.until,
            data.placedAt,
            actor.type,
            actor.id,
          ],
        );
        return;
      }
      case 'DataHoldLifted':
        await context.query(`update ${context.table('data_holds')} set lifted_at = $2, lifted_by_type = $3, lifted_by_id = $4 where id = $1 and lifted_at is null`, [
          event.data.holdId,
          event.data.liftedAt,
          actor.type,
          actor.id,
        ]);
        return;
      case 'DataSubjectExported':
      case 'DataErasureRecorded': {
        const data = event.data;
        const exported = event.type === 'DataSubjectExported';
        await context.query(
          `insert into ${context.table('data_requests')} (id, organization_id, environment, kind, subject_kind, masked_identifier, subject_token, "references", pending, format, actor_type, actor_id, at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) on conflict (id) do nothing`,
          [
            data.requestId,
            data.organizationId,
            data.environment,
            exported ? 'export' : 'erasure',
            data.subjectKind,
            data.maskedIdentifier,
            data.subjectToken,
            data.references,
            event.type === 'DataErasureRecorded' ? event.data.pending : [],
            event.type === 'DataSubjectExported' ? event.data.format : null,
            actor.type,
            actor.id,
            data.at ?? occurredAt(recorded).toISOString(),
          ],
        );
        return;
      }
      default: {
        const _exhaustive: never = event;
        throw new Error(`invariant: unhandled data-subject event ${(_exhaustive as { type: string }).type}`);
      }
    }
  }),
};
