import type pg from 'pg';
import type { Logger } from 'pino';
import type { EventStore } from '../event-store/event-store.port.js';
import { ENCRYPT_LEGACY_EVENTS_COMMAND, esdbOldestRequestIsPlain, postgresHasPlainPersonalData } from './legacy-events.js';

/**
 * The service's check at start: one warning line (no personal data) while verification events
 * written before sealing still hold personal data in plain text. PostgreSQL: an index probe.
 * EventStoreDB: its oldest VerificationRequested is read (see esdbOldestRequestIsPlain). A check
 * that fails is logged and never stops the service.
 */
export async function warnOfPlainPersonalData(options: { readonly kind: 'postgres' | 'esdb'; readonly pool: pg.Pool; readonly store: EventStore; readonly logger: Logger }): Promise<boolean> {
  const { kind, logger } = options;
  try {
    const plain = kind === 'postgres' ? await postgresHasPlainPersonalData(options.pool) : await esdbOldestRequestIsPlain(options.store);
    if (!plain) return false;
    logger.warn(
      { eventStore: kind },
      kind === 'postgres'
        ? `The event log holds verification events from before personal data was sealed, in plain text: run \`${ENCRYPT_LEGACY_EVENTS_COMMAND}\` to seal them (docs/data-protection.md)`
        : `The event log holds verification events from before personal data was sealed, in plain text: \`${ENCRYPT_LEGACY_EVENTS_COMMAND}\` works on the PostgreSQL store only; on EventStoreDB copy them into fresh streams as docs/data-protection.md describes`,
    );
    return true;
  } catch (error) {
    logger.warn({ eventStore: kind, reason: error instanceof Error ? error.name : 'unknown' }, 'Could not check the event log for personal data in plain text');
    return false;
  }
}
