import { describe, expect, it } from '@jest/globals';
import type { CheckRecord } from './load.js';
import { parseRecord } from './webhook-receiver.js';
import { compareWebhooks, compareWithClient, expectedWebhooks, logFacts, settled, type ReceivedWebhook, type VerificationEventRow, type WalletEventRow } from './verify.js';

const WALLET = 'wallet-org_1.test';

/** One check's events: requested by `requestId`, then `terminal` (if any). */
function verification(reference: string, requestId: string, terminal?: 'found' | 'failed' | 'rejected'): VerificationEventRow[] {
  const rows: VerificationEventRow[] = [
    { stream_id: `verification-${reference}`, type: 'VerificationRequested', data: { reference, organizationId: 'org_1' }, metadata: { correlationId: requestId } },
  ];
  if (terminal === 'found') rows.push({ stream_id: `verification-${reference}`, type: 'VerificationCompleted', data: { reference, outcome: 'found' }, metadata: {} });
  if (terminal === 'failed') rows.push({ stream_id: `verification-${reference}`, type: 'VerificationFailed', data: { reference }, metadata: {} });
  if (terminal === 'rejected') rows.push({ stream_id: `verification-${reference}`, type: 'VerificationRejected', data: { reference }, metadata: {} });
  return rows;
}

function wallet(...events: [type: string, reference: string, amountKobo: number][]): WalletEventRow[] {
  return events.map(([type, reference, amountKobo], revision) => ({ stream_id: WALLET, revision: String(revision), type, data: { reference, amountKobo } }));
}

/** A check answered `status`, whose answer carried the server's id `requestId` (the correlation id of its events). */
const answered = (requestId: string, status: number, extra: Partial<CheckRecord> = {}): CheckRecord => ({
  requestId,
  serverRequestId: requestId,
  organization: 0,
  scope: 'nin',
  api: 'api-1',
  sentAtMs: 0,
  status,
  ...extra,
});

describe('The chaos run checks', () => {
  const clean = logFacts(
    [...verification('vrf_A', 'req-a', 'found'), ...verification('vrf_B', 'req-b', 'failed'), ...verification('vrf_C', 'req-c', 'rejected')],
    wallet(
      ['WalletFunded', '', 15_000],
      ['WalletFundsReserved', 'vrf_A', 10_000],
      ['WalletFundsReserved', 'vrf_B', 5_000],
      ['WalletDebited', 'vrf_A', 10_000],
      ['WalletReservationReleased', 'vrf_B', 5_000],
    ),
  );

  it('find nothing wrong in a log and a client record that agree', () => {
    expect(clean.discrepancies).toEqual([]);
    expect(settled(clean)).toBe(true);
    const client = compareWithClient(
      [
        answered('req-a', 201, { reference: 'vrf_A', verificationStatus: 'found' }),
        answered('req-b', 502, { reference: 'vrf_B' }),
        answered('req-c', 402),
        answered('req-d', 503),
        { ...answered('req-e', 0), status: undefined },
      ],
      clean,
    );
    expect(client).toEqual({ discrepancies: [], unanswered: { charged: 0, uncharged: 0, neverWritten: 1, untraced: 0 }, notKnown: { charged: 0, uncharged: 0 } });
    expect(clean.wallets.get(WALLET)).toEqual({ fundedKobo: 15_000, debitedKobo: 10_000, reservations: 2 });
  });

  it("match an answer to its verifications by the server's request id it carried (every event's correlation id), not by the run's own label of the check", () => {
    const record = { ...answered('chaos-run-0', 201, { reference: 'vrf_A', verificationStatus: 'found' }), serverRequestId: 'req-a' };
    const unanswered = { ...answered('chaos-run-1', 0), status: undefined, serverRequestId: undefined };
    expect(compareWithClient([record, unanswered], clean)).toEqual({
      discrepancies: [],
      unanswered: { charged: 0, uncharged: 0, neverWritten: 0, untraced: 1 },
      notKnown: { charged: 0, uncharged: 0 },
    });
  });

  it("accept a 503 'not known yet' naming a reference whose request never reached the log, and flag any other 503 that names one", () => {
    const client = compareWithClient([answered('req-x', 503, { reference: 'vrf_X', outcomeNotKnown: true }), answered('req-y', 503, { reference: 'vrf_Y' })], clean);
    expect(client.discrepancies.map((discrepancy) => discrepancy.message)).toEqual(['req-y (nin, api-1): answered vrf_Y, the log has none for this request']);
    expect(client.notKnown).toEqual({ charged: 0, uncharged: 1 });
  });

  it('match every check, answered or not, by the keyed hash of its own X-Request-Id when the run holds the key', () => {
    const hashed = logFacts(
      [
        {
          stream_id: 'verification-vrf_H',
          type: 'VerificationRequested',
          data: { reference: 'vrf_H', organizationId: 'org_1' },
          metadata: { correlationId: 'server-id', callerRequestIdHash: 'hash-of-chaos-run-7' },
        },
        { stream_id: 'verification-vrf_H', type: 'VerificationFailed', data: { reference: 'vrf_H' }, metadata: {} },
      ],
      [],
    );
    const unanswered = { ...answered('chaos-run-7', 0), status: undefined, serverRequestId: undefined };
    expect(compareWithClient([unanswered], hashed, (record) => `hash-of-${record.requestId}`).unanswered).toEqual({ charged: 0, uncharged: 1, neverWritten: 0, untraced: 0 });
  });

  it('flag a 201 whose verification was never charged, its reservation left open, and a charge behind a 503', () => {
    const facts = logFacts(
      [...verification('vrf_A', 'req-a', 'found'), ...verification('vrf_B', 'req-b', 'failed')],
      wallet(['WalletFunded', '', 20_000], ['WalletFundsReserved', 'vrf_A', 10_000], ['WalletFundsReserved', 'vrf_B', 5_000], ['WalletDebited', 'vrf_B', 5_000]),
    );
    expect(settled(facts)).toBe(false);
    expect(facts.discrepancies.map((discrepancy) => discrepancy.check).sort()).toEqual(['charged but not completed', 'completed but not charged', 'reservation left open']);
    const client = compareWithClient([answered('req-a', 201, { reference: 'vrf_A', verificationStatus: 'found' }), answered('req-b', 503)], facts);
    expect(client.discrepancies.map((discrepancy) => discrepancy.check)).toEqual(['201 not charged', '503 but charged']);
  });

  it('count a 503 that said the outcome was not known yet by how it was settled, charged or not, without flagging it', () => {
    const facts = logFacts(
      [...verification('vrf_A', 'req-a', 'found'), ...verification('vrf_B', 'req-b', 'failed')],
      wallet(
        ['WalletFunded', '', 20_000],
        ['WalletFundsReserved', 'vrf_A', 10_000],
        ['WalletFundsReserved', 'vrf_B', 5_000],
        ['WalletDebited', 'vrf_A', 10_000],
        ['WalletReservationReleased', 'vrf_B', 5_000],
      ),
    );
    const client = compareWithClient(
      [
        answered('req-a', 503, { errorCode: 'service_unavailable', reference: 'vrf_A', outcomeNotKnown: true }),
        answered('req-b', 503, { errorCode: 'service_unavailable', reference: 'vrf_B', outcomeNotKnown: true }),
      ],
      facts,
    );
    expect(client.discrepancies).toEqual([]);
    expect(client.notKnown).toEqual({ charged: 1, uncharged: 1 });
  });

  it('flag a 201 still pending, a 500, and a verification left open or finished twice', () => {
    const facts = logFacts(
      [...verification('vrf_A', 'req-a'), ...verification('vrf_B', 'req-b', 'found'), ...verification('vrf_B', 'req-b', 'failed').slice(1)],
      wallet(['WalletFunded', '', 20_000], ['WalletFundsReserved', 'vrf_B', 10_000], ['WalletDebited', 'vrf_B', 10_000]),
    );
    expect(facts.discrepancies.map((discrepancy) => discrepancy.check).sort()).toEqual(['verification finished twice', 'verification left open']);
    const client = compareWithClient(
      [answered('req-a', 201, { reference: 'vrf_A', verificationStatus: 'pending' }), answered('req-x', 500, { errorCode: 'internal_error' })],
      facts,
    );
    expect(client.discrepancies.map((discrepancy) => discrepancy.check)).toEqual(['201 not charged', '201 not finished', 'unexpected answer']);
  });

  it('flag a balance or an available balance below zero, event by event, and a settlement of no reservation', () => {
    const facts = logFacts(
      [...verification('vrf_A', 'req-a', 'found'), ...verification('vrf_B', 'req-b', 'found')],
      wallet(
        ['WalletFunded', '', 10_000],
        ['WalletFundsReserved', 'vrf_A', 10_000],
        ['WalletFundsReserved', 'vrf_B', 10_000],
        ['WalletDebited', 'vrf_A', 10_000],
        ['WalletDebited', 'vrf_B', 10_000],
        ['WalletDebited', 'vrf_C', 10_000],
      ),
    );
    expect(facts.discrepancies.map((discrepancy) => discrepancy.check)).toEqual([
      'negative available balance',
      'negative available balance',
      'negative balance',
      'negative available balance',
      'settled without a reservation',
      'negative balance',
      'negative available balance',
    ]);
  });
});

describe('The chaos run checks webhook deliveries', () => {
  // vrf_A (org_1) completed, vrf_B failed: only vrf_A and org_1's funding call for a delivery; org_2 has no endpoint.
  const facts = logFacts([...verification('vrf_A', 'req-a', 'found'), ...verification('vrf_B', 'req-b', 'failed')], wallet(['WalletFunded', '', 10_000]));
  const expected = expectedWebhooks(
    [
      { event_id: 'e-1', type: 'WalletFunded', data: { organizationId: 'org_1', fundingReference: 'fund-1' } },
      { event_id: 'e-2', type: 'WalletFunded', data: { organizationId: 'org_2', fundingReference: 'fund-2' } },
      { event_id: 'e-3', type: 'VerificationCompleted', data: { reference: 'vrf_A' } },
    ],
    facts,
    new Set(['org_1']),
  );
  const request = (webhookId: string, type: string, reference: string, answer: ReceivedWebhook['answer'], verified = true, organizationId = 'org_1'): ReceivedWebhook => ({
    webhookId,
    type,
    reference,
    organizationId,
    answer,
    verified,
  });

  it('expect the completed checks and fundings of organizations with an endpoint, by the webhook-id their log event gives', () => {
    expect(expected).toEqual([
      { webhookId: 'msg_e-1', type: 'wallet.funded', reference: 'fund-1', organizationId: 'org_1' },
      { webhookId: 'msg_e-3', type: 'verification.completed', reference: 'vrf_A', organizationId: 'org_1' },
    ]);
  });

  it('find nothing wrong when each was accepted at least once after failed attempts, with one webhook-id throughout', () => {
    const findings = compareWebhooks(expected, [
      request('msg_e-1', 'wallet.funded', 'fund-1', 'failed'),
      request('msg_e-1', 'wallet.funded', 'fund-1', 'accepted'),
      request('msg_e-3', 'verification.completed', 'vrf_A', 'held'),
      request('msg_e-3', 'verification.completed', 'vrf_A', 'accepted'),
      request('msg_e-3', 'verification.completed', 'vrf_A', 'accepted'),
    ]);
    expect(findings).toEqual({ discrepancies: [], delivered: 2, requests: 5, duplicates: 1 });
  });

  it("tell two organizations' fundings of the same reference apart", () => {
    const two = expectedWebhooks(
      [
        { event_id: 'e-1', type: 'WalletFunded', data: { organizationId: 'org_1', fundingReference: 'same' } },
        { event_id: 'e-2', type: 'WalletFunded', data: { organizationId: 'org_2', fundingReference: 'same' } },
      ],
      facts,
      new Set(['org_1', 'org_2']),
    );
    const findings = compareWebhooks(two, [request('msg_e-1', 'wallet.funded', 'same', 'accepted'), request('msg_e-2', 'wallet.funded', 'same', 'accepted', true, 'org_2')]);
    expect(findings.discrepancies).toEqual([]);
  });

  it('flag a delivery never accepted, a bad signature and a webhook-id that changed between attempts', () => {
    const findings = compareWebhooks(expected, [
      request('msg_e-1', 'wallet.funded', 'fund-1', 'failed'),
      request('msg_other', 'verification.completed', 'vrf_A', 'accepted'),
      request('msg_e-3', 'verification.completed', 'vrf_A', 'failed', false),
    ]);
    expect(findings.discrepancies.map((discrepancy) => discrepancy.check)).toEqual([
      'webhook signature invalid',
      'webhook not delivered',
      'webhook-id not stable',
      'webhook not delivered',
    ]);
    expect(findings.delivered).toBe(0);
  });

  it("read the receiver's record up to a line its kill cut short", () => {
    const line = JSON.stringify(request('msg_e-1', 'wallet.funded', 'fund-1', 'accepted'));
    expect(parseRecord(`${line}\n${line}\n{"path":"/hooks/0","webhookId":"msg_`)).toEqual([JSON.parse(line), JSON.parse(line)]);
  });
});
