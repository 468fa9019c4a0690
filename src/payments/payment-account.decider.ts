import { InvariantViolated } from '../common/errors.js';
import type { Decider } from '../event-sourcing/decider.js';
import type { DedicatedAccountAssigned, PaymentAccountEvent } from './topup.events.js';

type Account = Omit<DedicatedAccountAssigned['data'], 'schemaVersion'>;
type Ids = Pick<Account, 'organizationId' | 'environment' | 'rail' | 'customerCode'>;

export type PaymentAccountState = null | (Ids & { readonly status: 'requested' | 'failed' }) | (Account & { readonly status: 'assigned' });

export type PaymentAccountCommand =
  /** The rail answered the account at once, or its assignment webhook named it. */
  | { readonly type: 'AssignDedicatedAccount'; readonly account: Account }
  /** The rail took the request and assigns the account later. */
  | { readonly type: 'RequestDedicatedAccount'; readonly ids: Ids }
  | { readonly type: 'FailDedicatedAccount'; readonly customerCode: string };

/**
 * One dedicated account per organization and environment: the first assignment stays. An account
 * the rail assigns later is requested first; its webhook assigns it or fails it (then it may be
 * requested again). A webhook for another customer than the one requested changes nothing.
 */
export function decideAccount(command: PaymentAccountCommand, state: PaymentAccountState): PaymentAccountEvent[] {
  switch (command.type) {
    case 'AssignDedicatedAccount':
      if (state?.status === 'assigned') return [];
      if (state !== null && state.status === 'requested' && state.customerCode !== command.account.customerCode) return [];
      return [{ type: 'DedicatedAccountAssigned', data: { ...command.account, schemaVersion: 1 } }];
    case 'RequestDedicatedAccount':
      if (state !== null && (state.status === 'assigned' || (state.status === 'requested' && state.customerCode === command.ids.customerCode))) return [];
      return [{ type: 'DedicatedAccountRequested', data: { ...command.ids, schemaVersion: 1 } }];
    case 'FailDedicatedAccount':
      if (state === null || state.status !== 'requested' || state.customerCode !== command.customerCode) return [];
      return [
        {
          type: 'DedicatedAccountAssignmentFailed',
          data: { organizationId: state.organizationId, environment: state.environment, rail: state.rail, customerCode: state.customerCode, schemaVersion: 1 },
        },
      ];
    default: {
      const _exhaustive: never = command;
      throw new InvariantViolated(`unknown payment account command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export function evolveAccount(state: PaymentAccountState, event: PaymentAccountEvent): PaymentAccountState {
  const { organizationId, environment, rail, customerCode } = event.data;
  switch (event.type) {
    case 'DedicatedAccountRequested':
      return { organizationId, environment, rail, customerCode, status: 'requested' };
    case 'DedicatedAccountAssigned':
      return state?.status === 'assigned'
        ? state
        : {
            organizationId,
            environment,
            rail,
            customerCode,
            accountNumber: event.data.accountNumber,
            accountName: event.data.accountName,
            bankName: event.data.bankName,
            status: 'assigned',
          };
    case 'DedicatedAccountAssignmentFailed':
      return { organizationId, environment, rail, customerCode, status: 'failed' };
    default: {
      const _exhaustive: never = event;
      throw new InvariantViolated(`unknown payment account event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export const paymentAccountDecider: Decider<PaymentAccountState, PaymentAccountCommand, PaymentAccountEvent> = { initialState: null, decide: decideAccount, evolve: evolveAccount };
