import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { JsonObject } from '../event-store/event-store.port.js';
import { checkpointMac, historyCheckpointKey, stateFromJson, stateToJson } from './history-checkpoints.js';
import type { ReplayState } from './wallet-replay.js';

const state: ReplayState = {
  revision: 999n,
  position: 123_456_789_012n,
  linkBefore: 'a'.repeat(64),
  link: 'b'.repeat(64),
  chainStarted: true,
  hashedEvents: 990,
  unhashedEvents: 10,
  hashedFromRevision: 10n,
  firstBreak: { revision: '500', position: '77', eventId: 'e', kind: 'content_changed', message: 'its content does not match its hash (the event was changed)' },
  breaks: 1,
  fundedKobo: 5_000_000,
  debitedKobo: 1_000_000,
  reservedKobo: -2_000,
  open: [{ reference: 'vrf_1', amountKobo: 1_000, scope: 'nin', reservedAt: new Date('2026-03-03T13:00:00.123Z'), revision: 998n }],
  totals: {
    funding: { count: 2, amountKobo: 5_000_000 },
    reservation: { count: 500, amountKobo: 500_000 },
    debit: { count: 400, amountKobo: 1_000_000 },
    release: { count: 97, amountKobo: 97_000 },
  },
  entries: 999,
  ledgerProblems: [{ revision: '600', position: '88', eventId: 'f', kind: 'ledger_invalid', message: 'the available balance or the reserved amount went negative' }],
  ledgerProblemCount: 1,
  latestOccurredAt: new Date('2026-03-03T13:00:01.000Z'),
};

describe('History checkpoints', () => {
  describe('When a replay state is stored and read back', () => {
    it('comes back whole, through JSON as PostgreSQL returns it', () => {
      const stored = JSON.parse(JSON.stringify(stateToJson(state))) as JsonObject;
      expect(stateFromJson(stored)).toEqual(state);
    });

    it('is not read in another format version or shape', () => {
      const stored = stateToJson(state);
      expect(stateFromJson({ ...stored, version: 2 })).toBeUndefined();
      expect(stateFromJson({ ...stored, link: 'not a link' })).toBeUndefined();
      expect(stateFromJson({ ...stored, fundedKobo: -1 })).toBeUndefined();
      expect(stateFromJson({ ...stored, open: [{ reference: 'vrf_1' }] })).toBeUndefined();
      expect(stateFromJson([])).toBeUndefined();
    });
  });

  describe('When a checkpoint is MACed', () => {
    const key = historyCheckpointKey(randomBytes(32));
    const stored = stateToJson(state);

    it('does not depend on the order of the stored keys (jsonb reorders them)', () => {
      const reordered: JsonObject = Object.fromEntries(Object.entries(stored).reverse());
      expect(checkpointMac(key, 'wallet-org_1.live', reordered)).toBe(checkpointMac(key, 'wallet-org_1.live', stored));
    });

    it('changes with any figure, the stream and the key', () => {
      const mac = checkpointMac(key, 'wallet-org_1.live', stored);
      expect(checkpointMac(key, 'wallet-org_1.live', { ...stored, fundedKobo: 5_000_001 })).not.toBe(mac);
      expect(checkpointMac(key, 'wallet-org_2.live', stored)).not.toBe(mac);
      expect(checkpointMac(historyCheckpointKey(randomBytes(32)), 'wallet-org_1.live', stored)).not.toBe(mac);
    });
  });
});
