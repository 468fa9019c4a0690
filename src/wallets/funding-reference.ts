import { MAX_REFERENCE_LENGTH } from './wallet.decider.js';

/** What an operator may give as a funding reference, on the admin API and in the CLI alike. */
export const FUNDING_REFERENCE = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_REFERENCE_LENGTH}}$`);
