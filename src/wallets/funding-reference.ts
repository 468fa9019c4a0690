import { MAX_REFERENCE_LENGTH } from './wallet.decider.js';

/**
 * What an operator may give as a funding reference, on the admin API, the console and in the CLI
 * alike. `topup:` is the top-ups' own namespace (`topup:<reference>` is a top-up's credit): an
 * operator's funding there could take a top-up's credit, or pass for one in the payments audit.
 */
export const FUNDING_REFERENCE = new RegExp(`^(?!topup:)[A-Za-z0-9._:-]{1,${MAX_REFERENCE_LENGTH}}$`);
export const FUNDING_REFERENCE_MESSAGE = `reference must be 1 to ${MAX_REFERENCE_LENGTH} characters of A-Z, a-z, 0-9, ".", "_", ":" or "-", not starting with "topup:" (the top-ups' own)`;
