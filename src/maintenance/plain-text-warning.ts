import type { Logger } from 'pino';
import type { EventStore } from '../event-store/event-store.port.js';
import { ENCRYPT_LEGACY_EVENTS_COMMAND, oldestRequestIsPlain } from './legacy-events.js';

/**
 * The service's check at start: one warning line (no personal data) while verification events
 * written before sealing still hold personal data in plain text. With the store's log reader (the
 * PostgreSQL log): an index probe, and the command seals them in place. Without one (EventStoreDB):
 * its oldest VerificationRequested is read (see oldestRequestIsPlain). A check that fails is
 * logged and never stops the service.
 */
export async function warnOfPlainPersonalData(options: { readonly store: EventStore; readonly logger: Logger }): Promise<boolean> {
  const { store, logger } = options;
  const legacy = store.logReader?.legacyEvents;
  try {
    const plain = legacy !== undefined ? await legacy.hasUnsealed() : await oldestRequestIsPlain(store);
    if (!plain) return false;
    logger.warn(
      { eventStore: store.kind },
      legacy !== undefined
        ? `The event log holds verification events from before personal data was sealed, in plain text: run \`${ENCRYPT_LEGACY_EVENTS_COMMAND}\` to seal them (docs/data-protection.md)`
        : `The event log holds verification events from before personal data was sealed, in plain text: \`${ENCRYPT_LEGACY_EVENTS_COMMAND}\` works on the PostgreSQL store only; on EventStoreDB copy them into fresh streams as docs/data-protection.md describes`,
    );
    return true;
  } catch (error) {
    logger.warn({ eventStore: store.kind, reason: error instanceof Error ? error.name : 'unknown' }, 'Could not check the event log for personal data in plain text');
    return false;
  }
}
