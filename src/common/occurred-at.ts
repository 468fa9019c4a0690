import type { RecordedEvent } from '../event-store/event-store.port.js';

/** When a fact happened: the command's time from the metadata, else the store's commit time. */
export function occurredAt(event: RecordedEvent): Date {
  const stamped = event.metadata.occurredAt;
  return typeof stamped === 'string' ? new Date(stamped) : event.createdAt;
}
