/**
 * What a chaos run checks once the load stopped and the recovery deadline passed, from the event
 * log itself (the `events` table of the PostgreSQL store) against the client's own record:
 *   - every verification finished exactly once, and none is left pending;
 *   - every reservation was captured or released exactly once: none open;
 *   - a verification is charged exactly when it completed (found or not found);
 *   - no wallet's balance or available balance ever went below zero, event by event;
 *   - every 201 the client received names a verification that completed and was charged, and no
 *     verification behind a 402, 502 or 503 was charged (matched by the server's request id the
 *     answer's X-Request-Id carries, which is the correlation id of the events it caused: the
 *     server never writes a caller's own X-Request-Id to the log);
 *   - no answer outside the statuses a check may answer (a 500 is a bug).
 * The audit CLI's --reconcile and the projections' rebuild --verify run beside these (chaos.ts).
 */
import type pg from 'pg';
import type { CheckRecord } from './load.js';

export interface Discrepancy {
  readonly check: string;
  readonly message: string;
}

interface Verification {
  readonly reference: string;
  readonly correlationId: string;
  readonly organizationId: string;
  readonly terminal: string[];
  outcome?: string;
}

/** Rows of the `events` table, each stream's in revision order. */
export interface VerificationEventRow {
  readonly stream_id: string;
  readonly type: string;
  readonly data: { reference?: string; organizationId?: string; outcome?: string };
  readonly metadata: { correlationId?: string; callerRequestIdHash?: string };
}

export interface WalletEventRow {
  readonly stream_id: string;
  readonly revision: string;
  readonly type: string;
  readonly data: { reference?: string; amountKobo?: number; fundingReference?: string };
}

export interface LogFacts {
  readonly verifications: Map<string, Verification>;
  /** References debited, per wallet stream, and every reference debited anywhere. */
  readonly debited: Set<string>;
  readonly released: Set<string>;
  /** Open reservations per wallet stream, after the last event. */
  readonly open: Map<string, Set<string>>;
  readonly byCorrelation: Map<string, string[]>;
  readonly discrepancies: Discrepancy[];
  /** Per wallet stream: what was funded and charged, for the summary. */
  readonly wallets: Map<string, WalletTotals>;
}

export interface WalletTotals {
  fundedKobo: number;
  debitedKobo: number;
  reservations: number;
}

const TERMINAL = new Set(['VerificationCompleted', 'VerificationFailed', 'VerificationRejected']);

/** Reads the verification and wallet streams of the PostgreSQL event log. */
export async function readLogFacts(client: pg.Client): Promise<LogFacts> {
  const verificationRows = await client.query<VerificationEventRow>(
    `select stream_id, type, data, metadata from events where stream_id like 'verification-%' order by stream_id, revision`,
  );
  const walletRows = await client.query<WalletEventRow>(
    `select stream_id, revision::text as revision, type, data from events where stream_id like 'wallet-%' order by stream_id, events.revision`,
  );
  return logFacts(verificationRows.rows, walletRows.rows);
}

/** What holds within the log alone, from its verification and wallet events (each stream's in revision order). */
export function logFacts(verificationRows: readonly VerificationEventRow[], walletRows: readonly WalletEventRow[]): LogFacts {
  const discrepancies: Discrepancy[] = [];
  const verifications = new Map<string, Verification>();
  const byCorrelation = new Map<string, string[]>();
  for (const row of verificationRows) {
    const reference = row.stream_id.slice('verification-'.length);
    if (row.type === 'VerificationRequested') {
      // The run's client finds its requests by the keyed hash of its X-Request-Id (the log never keeps the id itself).
      const correlationId = String(row.metadata.callerRequestIdHash ?? row.metadata.correlationId ?? '');
      verifications.set(reference, { reference, correlationId, organizationId: String(row.data.organizationId ?? ''), terminal: [] });
      byCorrelation.set(correlationId, [...(byCorrelation.get(correlationId) ?? []), reference]);
      continue;
    }
    const verification = verifications.get(reference);
    if (verification === undefined) {
      discrepancies.push({ check: 'verification stream', message: `${reference}: ${row.type} before any VerificationRequested` });
      continue;
    }
    if (TERMINAL.has(row.type)) {
      verification.terminal.push(row.type);
      if (row.type === 'VerificationCompleted') verification.outcome = row.data.outcome;
    }
  }
  for (const verification of verifications.values()) {
    if (verification.terminal.length === 0) discrepancies.push({ check: 'verification left open', message: `${verification.reference} has no terminal event` });
    if (verification.terminal.length > 1) discrepancies.push({ check: 'verification finished twice', message: `${verification.reference}: ${verification.terminal.join(', ')}` });
  }

  const debited = new Set<string>();
  const released = new Set<string>();
  const openByWallet = new Map<string, Map<string, number>>();
  const wallets = new Map<string, WalletTotals>();
  let stream = '';
  let balance = 0;
  let reserved = new Map<string, number>();
  let reservedKobo = 0;
  let totals: WalletTotals = { fundedKobo: 0, debitedKobo: 0, reservations: 0 };
  const settledHere = new Set<string>();
  for (const row of walletRows) {
    if (row.stream_id !== stream) {
      stream = row.stream_id;
      balance = 0;
      reservedKobo = 0;
      reserved = new Map();
      totals = { fundedKobo: 0, debitedKobo: 0, reservations: 0 };
      wallets.set(stream, totals);
      openByWallet.set(stream, reserved);
    }
    const where = `${stream} revision ${row.revision}`;
    const amount = Number(row.data.amountKobo ?? 0);
    const reference = String(row.data.reference ?? '');
    switch (row.type) {
      case 'WalletFunded':
        balance += amount;
        totals.fundedKobo += amount;
        break;
      case 'WalletFundsReserved':
        if (reserved.has(reference) || settledHere.has(`${stream}/${reference}`))
          discrepancies.push({ check: 'reservation twice', message: `${where}: ${reference} reserved again` });
        reserved.set(reference, amount);
        reservedKobo += amount;
        totals.reservations += 1;
        break;
      case 'WalletDebited':
      case 'WalletReservationReleased': {
        const held = reserved.get(reference);
        if (held === undefined) {
          discrepancies.push({ check: 'settled without a reservation', message: `${where}: ${row.type} of ${reference}, which holds no open reservation` });
          break;
        }
        reserved.delete(reference);
        reservedKobo -= held;
        settledHere.add(`${stream}/${reference}`);
        if (row.type === 'WalletDebited') {
          balance -= amount;
          totals.debitedKobo += amount;
          debited.add(reference);
        } else {
          released.add(reference);
        }
        break;
      }
      default:
        discrepancies.push({ check: 'wallet stream', message: `${where}: unknown event ${row.type}` });
    }
    const available = balance - reservedKobo;
    if (balance < 0) discrepancies.push({ check: 'negative balance', message: `${where}: balance ${balance} kobo after ${row.type}` });
    if (available < 0) discrepancies.push({ check: 'negative available balance', message: `${where}: available ${available} kobo after ${row.type}` });
  }
  const open = new Map([...openByWallet].map(([wallet, held]) => [wallet, new Set(held.keys())]));
  for (const [wallet, references] of open) {
    for (const reference of references) discrepancies.push({ check: 'reservation left open', message: `${wallet}: ${reference}` });
  }
  for (const verification of verifications.values()) {
    const charged = debited.has(verification.reference);
    const completed = verification.terminal[0] === 'VerificationCompleted';
    if (verification.terminal.length === 0) continue;
    if (completed && !charged) discrepancies.push({ check: 'completed but not charged', message: `${verification.reference} (${verification.outcome}) was never debited` });
    if (!completed && charged) discrepancies.push({ check: 'charged but not completed', message: `${verification.reference} (${verification.terminal[0]}) was debited` });
  }
  return { verifications, debited, released, open, byCorrelation, discrepancies, wallets };
}

/** True once every verification has finished and every reservation is settled. */
export function settled(facts: LogFacts): boolean {
  return [...facts.verifications.values()].every((verification) => verification.terminal.length > 0) && [...facts.open.values()].every((references) => references.size === 0);
}

/** Statuses a check may answer under faults; anything else is a discrepancy. */
const EXPECTED_STATUSES = new Set([201, 402, 502, 503]);

export interface ClientFindings {
  readonly discrepancies: Discrepancy[];
  /**
   * Checks with no answer (a connection cut by a kill, or refused), by what the server did with
   * them; untraced when no answer carried the server's id for them (always so over HTTP: the id
   * comes with the answer), so that the log's own checks alone hold them.
   */
  readonly unanswered: { charged: number; uncharged: number; neverWritten: number; untraced: number };
  /** 503s that said the outcome was not known yet, by what the server did with them. */
  readonly notKnown: { charged: number; uncharged: number };
}

/** The client's record against the log: what each answer told the client, and what the wallet holds. */
/**
 * `correlate` names the correlation a check's events carry: by default the server's request id its
 * answer carried (none without an answer); the run itself uses the keyed hash of its own
 * X-Request-Id (REQUEST_ID_HASH_KEY), which traces unanswered checks too.
 */
export function compareWithClient(
  records: readonly CheckRecord[],
  facts: LogFacts,
  correlate: (record: CheckRecord) => string | undefined = (record) => record.serverRequestId,
): ClientFindings {
  const discrepancies: Discrepancy[] = [];
  const unanswered = { charged: 0, uncharged: 0, neverWritten: 0, untraced: 0 };
  const notKnown = { charged: 0, uncharged: 0 };
  for (const record of records) {
    const correlationId = correlate(record);
    const references = correlationId === undefined ? [] : (facts.byCorrelation.get(correlationId) ?? []);
    const charged = references.filter((reference) => facts.debited.has(reference));
    const what = `${record.requestId} (${record.scope}, ${record.api})`;
    if (references.length > 1) discrepancies.push({ check: 'one request, several verifications', message: `${what}: ${references.join(', ')}` });
    if (record.status === undefined) {
      if (correlationId === undefined) unanswered.untraced += 1;
      else if (references.length === 0) unanswered.neverWritten += 1;
      else if (charged.length > 0) unanswered.charged += 1;
      else unanswered.uncharged += 1;
      continue;
    }
    if (!EXPECTED_STATUSES.has(record.status)) {
      discrepancies.push({ check: 'unexpected answer', message: `${what}: ${record.status} ${record.errorCode ?? ''}`.trim() });
      continue;
    }
    if (record.status === 201) {
      const verification = record.reference === undefined ? undefined : facts.verifications.get(record.reference);
      if (verification === undefined || !references.includes(verification.reference)) {
        discrepancies.push({
          check: '201 without its verification',
          message: `${what}: answered ${record.reference ?? 'no reference'}, the log has ${references.join(', ') || 'none'} for this request`,
        });
      } else if (!facts.debited.has(verification.reference)) {
        discrepancies.push({
          check: '201 not charged',
          message: `${what}: ${verification.reference} answered ${record.verificationStatus}, log ${verification.terminal.join(', ') || 'pending'}, never debited`,
        });
      }
      if (record.verificationStatus !== 'found' && record.verificationStatus !== 'not_found') {
        discrepancies.push({ check: '201 not finished', message: `${what}: ${record.reference} answered with status ${record.verificationStatus}` });
      }
      continue;
    }
    // A 503 "not known yet" promised nothing either way: the check is settled by its own log, which the log's checks hold to.
    if (record.outcomeNotKnown === true) {
      if (charged.length > 0) notKnown.charged += 1;
      else notKnown.uncharged += 1;
    }
    // 402, 502 and the other 503s: the client was told nothing was charged.
    else if (charged.length > 0)
      discrepancies.push({ check: `${record.status} but charged`, message: `${what}: answered ${record.status} ${record.errorCode ?? ''}, yet ${charged.join(', ')} was debited` });
    // A 503 "not known yet" may name a reference whose request never committed (the store went away
    // mid-append): nothing of this request in the log is then what it promised as much as anything.
    const neverWritten = record.outcomeNotKnown === true && references.length === 0;
    if (record.reference !== undefined && !references.includes(record.reference) && !neverWritten) {
      discrepancies.push({
        check: `${record.status} names another verification`,
        message: `${what}: answered ${record.reference}, the log has ${references.join(', ') || 'none'} for this request`,
      });
    }
  }
  return { discrepancies, unanswered, notKnown };
}

/** A delivery the log calls for: a completed check or a funding of an organization with an endpoint. */
export interface ExpectedWebhook {
  /** `msg_` + the log event's id: the webhook-id of every attempt. */
  readonly webhookId: string;
  readonly type: 'verification.completed' | 'wallet.funded';
  /** The verification's reference, or the funding's fundingReference. */
  readonly reference: string;
  readonly organizationId: string;
}

/** Rows of the `events` table of the two types that call for a delivery the run checks. */
export interface WebhookEventRow {
  readonly event_id: string;
  readonly type: string;
  readonly data: { reference?: string; organizationId?: string; fundingReference?: string };
}

/**
 * What the receiver must have accepted: every VerificationCompleted (its organization from the
 * verification's request, in `facts`) and every WalletFunded of an organization in `withEndpoint`.
 */
export function expectedWebhooks(rows: readonly WebhookEventRow[], facts: LogFacts, withEndpoint: ReadonlySet<string>): ExpectedWebhook[] {
  const expected: ExpectedWebhook[] = [];
  for (const row of rows) {
    const webhookId = `msg_${row.event_id}`;
    if (row.type === 'VerificationCompleted') {
      const reference = String(row.data.reference ?? '');
      const organizationId = facts.verifications.get(reference)?.organizationId;
      if (organizationId !== undefined && withEndpoint.has(organizationId)) expected.push({ webhookId, type: 'verification.completed', reference, organizationId });
    } else if (row.type === 'WalletFunded') {
      const organizationId = String(row.data.organizationId ?? '');
      if (withEndpoint.has(organizationId)) expected.push({ webhookId, type: 'wallet.funded', reference: String(row.data.fundingReference ?? ''), organizationId });
    }
  }
  return expected;
}

/** A request the chaos run's receiver recorded (webhook-receiver.ts's ReceivedDelivery). */
export interface ReceivedWebhook {
  readonly webhookId: string;
  readonly type: string | null;
  readonly reference: string | null;
  readonly organizationId: string | null;
  readonly verified: boolean;
  readonly answer: 'accepted' | 'failed' | 'held';
}

export interface WebhookFindings {
  readonly discrepancies: Discrepancy[];
  /** Expected deliveries accepted at least once, and requests that reached the receiver. */
  readonly delivered: number;
  readonly requests: number;
  /** Expected deliveries accepted more than once (at least once: allowed, counted). */
  readonly duplicates: number;
}

/**
 * The receiver's record against the log: every expected delivery accepted at least once with a
 * valid signature, every request to it signed validly, and one webhook-id per event on every
 * attempt (the one the log's event id gives).
 */
export function compareWebhooks(expected: readonly ExpectedWebhook[], received: readonly ReceivedWebhook[]): WebhookFindings {
  const discrepancies: Discrepancy[] = [];
  const byEvent = new Map<string, ReceivedWebhook[]>();
  for (const request of received) {
    if (!request.verified)
      discrepancies.push({ check: 'webhook signature invalid', message: `${request.webhookId} (${request.type ?? 'no type'} ${request.reference ?? ''})`.trim() });
    if (request.type === null || request.reference === null) continue;
    // A funding's reference is its organization's own: the same one may come from several organizations.
    const key = `${request.organizationId ?? ''} ${request.type} ${request.reference}`;
    byEvent.set(key, [...(byEvent.get(key) ?? []), request]);
  }
  let delivered = 0;
  let duplicates = 0;
  for (const event of expected) {
    const attempts = byEvent.get(`${event.organizationId} ${event.type} ${event.reference}`) ?? [];
    const otherIds = [...new Set(attempts.map((attempt) => attempt.webhookId).filter((id) => id !== event.webhookId))];
    if (otherIds.length > 0)
      discrepancies.push({ check: 'webhook-id not stable', message: `${event.type} ${event.reference}: ${event.webhookId} expected, also received ${otherIds.join(', ')}` });
    const accepted = attempts.filter((attempt) => attempt.answer === 'accepted' && attempt.verified && attempt.webhookId === event.webhookId).length;
    if (accepted === 0)
      discrepancies.push({
        check: 'webhook not delivered',
        message: `${event.type} ${event.reference} (${event.organizationId}), ${event.webhookId}: ${attempts.length} attempts seen, none accepted`,
      });
    else delivered += 1;
    if (accepted > 1) duplicates += 1;
  }
  return { discrepancies, delivered, requests: received.length, duplicates };
}
