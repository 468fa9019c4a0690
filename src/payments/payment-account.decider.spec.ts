import { describe, it } from '@jest/globals';
import { givenFor } from '../event-sourcing/decider.testing.js';
import { paymentAccountDecider } from './payment-account.decider.js';
import type { PaymentAccountEvent } from './topup.events.js';

const ids = (customerCode: string) => ({ organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR', environment: 'live', rail: 'paystack', customerCode });
const account = (customerCode: string, accountNumber = '9930000737') => ({ ...ids(customerCode), accountNumber, accountName: 'KORAPAY / IVL', bankName: 'Wema Bank' });
const requested = (customerCode: string): PaymentAccountEvent => ({ type: 'DedicatedAccountRequested', data: { ...ids(customerCode), schemaVersion: 1 } });
const assigned = (customerCode: string, accountNumber?: string): PaymentAccountEvent => ({
  type: 'DedicatedAccountAssigned',
  data: { ...account(customerCode, accountNumber), schemaVersion: 1 },
});
const failed = (customerCode: string): PaymentAccountEvent => ({ type: 'DedicatedAccountAssignmentFailed', data: { ...ids(customerCode), schemaVersion: 1 } });
const given = givenFor(paymentAccountDecider);

describe("An organization's dedicated account", () => {
  it('is assigned by the webhook for the customer asked for', () =>
    given([requested('CUS_a')])
      .when({ type: 'AssignDedicatedAccount', account: account('CUS_a') })
      .then([assigned('CUS_a')]));

  it('ignores an assignment for another customer than the one asked for', () =>
    given([requested('CUS_a')])
      .when({ type: 'AssignDedicatedAccount', account: account('CUS_b') })
      .then([]));

  it('keeps the first account assigned', () =>
    given([assigned('CUS_a')])
      .when({ type: 'AssignDedicatedAccount', account: account('CUS_a', '9930000738') })
      .then([]));

  it('records a failure of the request, once', () => {
    given([requested('CUS_a')])
      .when({ type: 'FailDedicatedAccount', customerCode: 'CUS_a' })
      .then([failed('CUS_a')]);
    given([requested('CUS_a'), failed('CUS_a')])
      .when({ type: 'FailDedicatedAccount', customerCode: 'CUS_a' })
      .then([]);
  });

  it('is not failed by a webhook for an assigned account', () =>
    given([requested('CUS_a'), assigned('CUS_a')])
      .when({ type: 'FailDedicatedAccount', customerCode: 'CUS_a' })
      .then([]));

  it('may be asked for again after a failure, not while a request stands', () => {
    given([requested('CUS_a'), failed('CUS_a')])
      .when({ type: 'RequestDedicatedAccount', ids: ids('CUS_a') })
      .then([requested('CUS_a')]);
    given([requested('CUS_a')])
      .when({ type: 'RequestDedicatedAccount', ids: ids('CUS_a') })
      .then([]);
  });
});
