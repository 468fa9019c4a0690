import { describe, expect, it } from '@jest/globals';
import type { JsonObject } from '../event-store/event-store.port.js';
import { evolve, initialWalletState, type WalletState } from './wallet.decider.js';
import type { WalletEvent } from './wallet.events.js';
import { stateFromJson, stateToJson } from './wallet-snapshots.js';

const wallet = { organizationId: 'org_snap', environment: 'test' } as const;
const meta = { schemaVersion: 1, organizationId: wallet.organizationId, environment: wallet.environment };

function folded(): WalletState {
  const events = [
    { type: 'WalletFunded', data: { ...meta, fundingReference: 'f-1', amountKobo: 50_000 } },
    { type: 'WalletFunded', data: { ...meta, fundingReference: 'f-2', amountKobo: 20_000 } },
    { type: 'WalletFundsReserved', data: { ...meta, reference: 'vrf_a', amountKobo: 10_000, scope: 'nin' } },
    { type: 'WalletFundsReserved', data: { ...meta, reference: 'vrf_b', amountKobo: 5_000, scope: 'bvn' } },
    { type: 'WalletDebited', data: { ...meta, reference: 'vrf_a', amountKobo: 10_000 } },
  ] as unknown as WalletEvent[];
  return events.reduce(evolve, initialWalletState(wallet.organizationId, wallet.environment));
}

/** The JSON as PostgreSQL's jsonb gives it back. */
const roundTrip = (json: JsonObject) => JSON.parse(JSON.stringify(json)) as JsonObject;

describe('Given a folded wallet', () => {
  it('when stored and read back, then it is the same state: totals, open reservations and funding references', () => {
    const state = folded();
    expect(stateFromJson(roundTrip(stateToJson(state)), wallet)).toEqual(state);
    expect([...(stateFromJson(roundTrip(stateToJson(state)), wallet)?.reservations ?? [])]).toEqual([['vrf_b', 5_000]]);
    expect([...(stateFromJson(roundTrip(stateToJson(state)), wallet)?.fundingReferences ?? [])]).toEqual([
      ['f-1', 50_000],
      ['f-2', 20_000],
    ]);
  });

  it('when read back for the wallet it names, then the state carries that wallet (the stored JSON names none)', () => {
    expect(stateToJson(folded())).not.toHaveProperty('organizationId');
    expect(stateFromJson(roundTrip(stateToJson(folded())), wallet)).toMatchObject(wallet);
  });
});

describe('Given a stored state this code must not trust', () => {
  const good = roundTrip(stateToJson(folded()));
  it.each<[string, JsonObject]>([
    ['another version', { ...good, version: 3 }],
    ['the version 1 format, whose funding references have no amounts', { ...good, version: 1, fundingReferences: ['f-1', 'f-2'] }],
    ['a funding reference without its amount', { ...good, fundingReferences: [['f-1', 50_000], 'f-2'] }],
    [
      'a funding reference listed twice',
      {
        ...good,
        fundingReferences: [
          ['f-1', 50_000],
          ['f-1', 20_000],
        ],
      },
    ],
    ['a total that is not an integer amount of kobo', { ...good, fundedKobo: 1.5 }],
    ['a negative total', { ...good, debitedKobo: -1 }],
    ['a reserved total other than the sum of the open reservations', { ...good, reservedKobo: 4_999 }],
    ['an available balance below zero', { ...good, debitedKobo: 70_000 }],
    ['a reservation that is not a [reference, kobo] pair', { ...good, reservations: [['vrf_b', 5_000, 1]] }],
    [
      'a reservation listed twice',
      {
        ...good,
        reservations: [
          ['vrf_b', 2_500],
          ['vrf_b', 2_500],
        ],
        reservedKobo: 5_000,
      },
    ],
    [
      'an empty funding reference',
      {
        ...good,
        fundingReferences: [
          ['f-1', 50_000],
          ['', 20_000],
        ],
      },
    ],
    ['no reservations at all', { ...good, reservations: null }],
  ])('when it has %s, then it is not read', (_, json) => {
    expect(stateFromJson(json, wallet)).toBeUndefined();
  });

  it('when it is not an object, then it is not read', () => {
    for (const json of [null, 1, 'state', [good]]) expect(stateFromJson(json, wallet)).toBeUndefined();
  });
});
