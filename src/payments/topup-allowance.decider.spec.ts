import { describe, it } from '@jest/globals';
import { ValidationFailed } from '../common/errors.js';
import { givenFor } from '../event-sourcing/decider.testing.js';
import { allowanceDecider, type AllowanceCommand } from './topup-allowance.decider.js';
import type { TopUpAllowanceEvent } from './topup.events.js';

const day = { organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR', environment: 'live', day: '2026-12-07' };
const reserve = (reference: string, amountKobo: number, limitKobo: number | null = 1_000_000): AllowanceCommand => ({
  type: 'ReserveAllowance',
  ...day,
  reference,
  amountKobo,
  limitKobo,
});
const reserved = (reference: string, amountKobo: number, limitKobo: number | null = 1_000_000): TopUpAllowanceEvent => ({
  type: 'TopUpAllowanceReserved',
  data: { ...day, reference, amountKobo, limitKobo, schemaVersion: 1 },
});
const released = (reference: string, amountKobo: number): TopUpAllowanceEvent => ({ type: 'TopUpAllowanceReleased', data: { ...day, reference, amountKobo, schemaVersion: 1 } });
const given = givenFor(allowanceDecider);

describe("A wallet's day of top-ups", () => {
  it('counts a top-up that fits in what is left of the limit', () =>
    given([reserved('a', 600_000)])
      .when(reserve('b', 400_000))
      .then([reserved('b', 400_000)]));

  it('refuses one that would go over the limit', () =>
    given([reserved('a', 600_000)])
      .when(reserve('b', 400_001))
      .thenThrows(ValidationFailed));

  it('counts a transfer (no limit) whatever the day holds', () =>
    given([reserved('a', 1_000_000)])
      .when(reserve('t', 5_000, null))
      .then([reserved('t', 5_000, null)]));

  it('counts a reference once', () =>
    given([reserved('a', 600_000)])
      .when(reserve('a', 600_000))
      .then([]));

  it('gives back a released amount, once, and does not count that reference again', () =>
    given([reserved('a', 600_000), released('a', 600_000)])
      .when(reserve('b', 1_000_000))
      .then([reserved('b', 1_000_000)]));

  it('counts a released reference again when asked to explicitly (paid after all), within the limit; else writes nothing', () => {
    const again = (reference: string, amountKobo: number): AllowanceCommand => ({ type: 'ReserveAllowanceAgain', ...day, reference, amountKobo, limitKobo: 1_000_000 });
    given([reserved('a', 600_000), released('a', 600_000), reserved('b', 400_000)])
      .when(again('a', 600_000))
      .then([reserved('a', 600_000)]);
    given([reserved('a', 600_000), released('a', 600_000), reserved('b', 400_001)])
      .when(again('a', 600_000))
      .then([]);
    given([reserved('a', 600_000)])
      .when(again('a', 600_000))
      .then([]);
  });

  it('releases nothing it did not count', () =>
    given([released('a', 600_000)])
      .when({ type: 'ReleaseAllowance', ...day, reference: 'a' })
      .then([]));
});
