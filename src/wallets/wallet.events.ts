import type { Event } from '../common/event.js';

/**
 * Events of `wallet-{organizationId}.{environment}`. Amounts are integers in kobo.
 * balance = funded - debited; reserved = open reservations; available = balance - reserved.
 */
export type WalletFunded = Event<'WalletFunded', { organizationId: string; environment: string; fundingReference: string; amountKobo: number }>;
export type WalletFundsReserved = Event<'WalletFundsReserved', { organizationId: string; environment: string; reference: string; amountKobo: number; scope: string }>;
/** The capture of a reservation: the verification was charged. */
export type WalletDebited = Event<'WalletDebited', { organizationId: string; environment: string; reference: string; amountKobo: number }>;
export type WalletReservationReleased = Event<'WalletReservationReleased', { organizationId: string; environment: string; reference: string; amountKobo: number; reason: string }>;

export type WalletEvent = WalletFunded | WalletFundsReserved | WalletDebited | WalletReservationReleased;

export const WALLET_EVENT_TYPES: readonly WalletEvent['type'][] = ['WalletFunded', 'WalletFundsReserved', 'WalletDebited', 'WalletReservationReleased'];

/** The funding reference of the sandbox credit every test wallet starts with. */
export const SANDBOX_CREDIT_REFERENCE = 'sandbox-credit';
