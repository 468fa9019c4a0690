import { TIMESTAMP, ref, type Schema } from '../common/openapi.js';
import { SCOPES } from '../scopes/scopes.js';
import { WALLET_ENTRY_TYPES } from '../wallets/wallet.read-model.js';

/** The OpenAPI schemas of the auditor's wallet history route. */

const INTEGER_STRING: Schema = { type: 'string', pattern: '^\\d+$' };

/** Figures as replayed: a log altered by hand can make any of them negative, and the replay shows it as it is. */
const AMOUNT: Schema = { type: 'integer', description: 'kobo' };

const FIGURES: Schema = {
  type: 'object',
  required: ['fundedKobo', 'debitedKobo', 'balanceKobo', 'reservedKobo', 'availableKobo'],
  properties: {
    fundedKobo: AMOUNT,
    debitedKobo: AMOUNT,
    balanceKobo: { type: 'integer', description: 'funded - debited' },
    reservedKobo: { type: 'integer', description: 'open reservations' },
    availableKobo: { type: 'integer', description: 'balance - reserved' },
  },
};

const ENTRY_TOTALS: Schema = { type: 'object', required: ['count', 'amountKobo'], properties: { count: { type: 'integer', minimum: 0 }, amountKobo: AMOUNT } };

export function walletHistorySchemas(): Record<string, Schema> {
  return {
    HistoryEntry: {
      type: 'object',
      required: [
        'revision',
        'position',
        'eventId',
        'occurredAt',
        'entryType',
        'reference',
        'scope',
        'amountKobo',
        'balanceKobo',
        'reservedKobo',
        'availableKobo',
        'actor',
        'chain',
        'hash',
      ],
      properties: {
        revision: { ...INTEGER_STRING, description: 'revision in the wallet stream, from 0', example: '7' },
        position: { ...INTEGER_STRING, description: 'global position in the event log (a string: it may exceed 2^53)', example: '1234000001' },
        eventId: { type: 'string', format: 'uuid' },
        occurredAt: TIMESTAMP,
        entryType: { type: 'string', enum: [...WALLET_ENTRY_TYPES] },
        reference: { type: 'string', description: 'the funding reference of a funding, the verification reference otherwise' },
        scope: { type: ['string', 'null'], enum: [...SCOPES, null], description: 'the scope of the check (reservations, debits and releases)' },
        amountKobo: { ...AMOUNT, description: 'positive in a sound log; entryType says which way it moved' },
        balanceKobo: { type: 'integer', description: 'after this entry' },
        reservedKobo: AMOUNT,
        availableKobo: AMOUNT,
        actor: { type: 'string', example: 'api_key:key_01JD3Q9ZK8W6V2C4X7N5B0M1TR' },
        chain: { type: 'string', enum: ['hashed', 'unhashed', 'broken'], description: 'unhashed: written before the hash chain existed' },
        hash: { type: ['string', 'null'], description: 'the stored SHA-256 chain hash' },
      },
    },
    LogProblem: {
      type: 'object',
      required: ['revision', 'position', 'eventId', 'kind', 'message'],
      properties: {
        revision: INTEGER_STRING,
        position: INTEGER_STRING,
        eventId: { type: 'string' },
        kind: { type: 'string', enum: ['content_changed', 'link_broken', 'hash_missing', 'malformed', 'ledger_invalid'] },
        message: { type: 'string' },
      },
    },
    HistoryMeta: {
      type: 'object',
      required: ['total', 'page', 'pageSize', 'totalPages', 'asOf', 'lastRevision', 'balance', 'totals', 'openReservations', 'chain', 'ledgerProblems'],
      properties: {
        total: { type: 'integer', minimum: 0, description: 'entries up to asOf' },
        page: { type: 'integer', minimum: 1 },
        pageSize: { type: 'integer', minimum: 1, maximum: 100 },
        totalPages: { type: 'integer', minimum: 0 },
        asOf: { type: ['string', 'null'], format: 'date-time', description: 'the as-of time asked for, or null (now)' },
        lastRevision: { type: ['string', 'null'], pattern: '^\\d+$', description: 'the newest revision at or before asOf' },
        balance: { ...FIGURES, description: 'the balance as of asOf' },
        totals: {
          type: 'object',
          description: 'per entry type, up to asOf',
          required: [...WALLET_ENTRY_TYPES],
          properties: Object.fromEntries(WALLET_ENTRY_TYPES.map((type) => [type, ENTRY_TOTALS])),
        },
        openReservations: { type: 'integer', minimum: 0 },
        chain: {
          type: 'object',
          required: ['verified', 'hashedEvents', 'unhashedEvents', 'hashedFromRevision', 'head', 'firstBreak', 'breaks'],
          properties: {
            verified: { type: 'boolean', description: 'every link holds (events written before the chain existed excepted)' },
            hashedEvents: { type: 'integer', minimum: 0 },
            unhashedEvents: { type: 'integer', minimum: 0 },
            hashedFromRevision: { type: ['string', 'null'] },
            head: { type: 'string', description: 'the link after the last event replayed' },
            firstBreak: { oneOf: [ref('LogProblem'), { type: 'null' }] },
            breaks: { type: 'integer', minimum: 0 },
          },
        },
        ledgerProblems: { type: 'array', items: ref('LogProblem'), description: 'events that break the ledger rules (the first 100)' },
      },
    },
  };
}
