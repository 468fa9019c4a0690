import type { EventStore, RecordedEvent } from '../event-store/event-store.port.js';
import type { PaymentRail } from './payment-rail.port.js';
import type { Rail, VerifiedTransaction } from './topup.decider.js';
import { TOPUP_CATEGORY } from './topup.events.js';

const PAGE = 1_000;
const FUNDING_PREFIX = 'topup:';

export type PaymentFindingKind =
  /** A credited top-up the provider does not confirm as a success. */
  | 'missing_at_provider'
  /** A credited top-up whose wallet funding, or the provider's amount, differs from what was credited. */
  | 'mismatched'
  /** A top-up's reference funded a wallet more than once. */
  | 'duplicate'
  /** A credited top-up with no wallet funding under its reference. */
  | 'missing_funding'
  /** A wallet funding under a top-up's reference with no credited top-up behind it. */
  | 'funding_without_top_up'
  /** The provider settled it and the wallet was never credited (stuck paid, its webhook lost, failed then paid): not held for an operator. */
  | 'uncredited'
  /** Held for an operator, nothing credited (amounts or currency disagreed, or over the day's limit): until an operator settles it. */
  | 'flagged'
  /** The provider could not be asked (down, or not configured here): not proven either way. */
  | 'unverified';

/** Every flag, for the console's OpenAPI document: a flag added above fails to compile until it is listed here. */
export const TOP_UP_FLAGS = Object.keys({ mismatch: true, uncredited: true, duplicate: true, missing_at_provider: true, unverified: true } satisfies Record<
  TopUpFlag,
  true
>) as TopUpFlag[];

export interface PaymentFinding {
  readonly kind: PaymentFindingKind;
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: string;
  readonly rail: string;
  readonly creditedKobo: number | null;
  readonly fundedKobo: number | null;
  readonly providerKobo: number | null;
  readonly providerStatus: string | null;
}

export interface PaymentReconciliation {
  /** Top-ups in the log, each checked. */
  readonly topUps: number;
  readonly credited: number;
  readonly creditedKobo: number;
  readonly findings: readonly PaymentFinding[];
}

/** A top-up as its events tell it. */
interface TopUpFacts {
  organizationId: string;
  environment: string;
  rail: string;
  status: string;
  initiatedKobo: number;
  creditedKobo: number | null;
}

/** Every top-up and every wallet funding under `topup:<reference>` in the log (one wallet's when named), in log order. */
async function readTopUpLog(
  store: EventStore,
  wallet?: { organizationId: string; environment: string },
): Promise<{ topUps: Map<string, TopUpFacts>; fundings: Map<string, { organizationId: string; environment: string; amounts: number[] }> }> {
  const topUps = new Map<string, TopUpFacts>();
  const fundings = new Map<string, { organizationId: string; environment: string; amounts: number[] }>();
  for (let from: bigint | undefined; ;) {
    const page: RecordedEvent[] = await store.readAll({ fromPosition: from, maxCount: PAGE, filter: { streamCategories: [TOPUP_CATEGORY], eventTypes: ['WalletFunded'] } });
    for (const event of page) {
      const data = event.data as Record<string, unknown>;
      if (wallet !== undefined && (data.organizationId !== wallet.organizationId || data.environment !== wallet.environment)) continue;
      if (event.type === 'WalletFunded') {
        const reference = String(data.fundingReference);
        if (!reference.startsWith(FUNDING_PREFIX)) continue;
        const key = reference.slice(FUNDING_PREFIX.length);
        const entry = fundings.get(key) ?? { organizationId: String(data.organizationId), environment: String(data.environment), amounts: [] };
        entry.amounts.push(Number(data.amountKobo));
        fundings.set(key, entry);
        continue;
      }
      const reference = String(data.reference);
      if (event.type === 'TopUpInitiated') {
        topUps.set(reference, {
          organizationId: String(data.organizationId),
          environment: String(data.environment),
          rail: String(data.rail),
          status: 'initiated',
          initiatedKobo: Number(data.amountKobo),
          creditedKobo: null,
        });
        continue;
      }
      const facts = topUps.get(reference);
      if (facts === undefined) continue;
      if (event.type === 'TopUpPaid') facts.status = 'paid';
      else if (event.type === 'TopUpFailed') facts.status = 'failed';
      else if (event.type === 'TopUpFlagged') facts.status = 'flagged';
      else if (event.type === 'TopUpCredited') Object.assign(facts, { status: 'credited', creditedKobo: Number(data.amountKobo) });
      // An operator's dismissal (a reason from a fixed list, on the log) settles a held or uncredited payment: nothing is owed.
      else if (event.type === 'TopUpResolved' && data.resolution === 'dismiss') facts.status = 'dismissed';
    }
    if (page.length < PAGE) break;
    from = page[page.length - 1].position;
  }
  return { topUps, fundings };
}

/** The rail's answer for a reference; undefined when it could not be asked. */
async function ask(railOf: (name: Rail) => PaymentRail | undefined, rail: string, reference: string): Promise<VerifiedTransaction | null | undefined> {
  try {
    return await railOf(rail as Rail)?.verify(reference);
  } catch {
    return undefined;
  }
}

/**
 * The one check of a top-up, shared by `audit:payments` and the console's Payments audit: its
 * events, the wallet's fundings under its reference and the provider's answer now must agree.
 * Credited: funded once with the amount credited, and settled by the provider for it. Not
 * credited: nothing funded, and not settled (else it is `uncredited`, or `flagged` when held),
 * unless an operator dismissed it for a reason of the list.
 */
export function checkTopUp(reference: string, facts: TopUpFacts, funded: readonly number[], verified: VerifiedTransaction | null | undefined): PaymentFinding[] {
  const findings: PaymentFinding[] = [];
  const settled = verified?.status === 'success' ? verified : undefined;
  const base = {
    reference,
    organizationId: facts.organizationId,
    environment: facts.environment,
    rail: facts.rail,
    creditedKobo: facts.creditedKobo,
    fundedKobo: funded[0] ?? null,
    providerKobo: null,
    providerStatus: null,
  };
  const provider = { providerKobo: settled?.amountKobo ?? null, providerStatus: verified === undefined ? null : (verified?.status ?? 'not_found') };
  if (facts.creditedKobo !== null) {
    if (funded.length === 0) findings.push({ ...base, kind: 'missing_funding' });
    else if (funded.length > 1) findings.push({ ...base, kind: 'duplicate', fundedKobo: funded.reduce((sum, amount) => sum + amount, 0) });
    else if (funded[0] !== facts.creditedKobo) findings.push({ ...base, kind: 'mismatched' });
    if (verified === undefined) findings.push({ ...base, kind: 'unverified' });
    else if (settled === undefined) findings.push({ ...base, kind: 'missing_at_provider', providerStatus: provider.providerStatus });
    else if (settled.amountKobo !== facts.creditedKobo || settled.currency !== 'NGN') findings.push({ ...base, kind: 'mismatched', ...provider });
    return findings;
  }
  if (funded.length > 0) findings.push({ ...base, kind: 'funding_without_top_up', fundedKobo: funded.reduce((sum, amount) => sum + amount, 0) });
  if (facts.status === 'dismissed') return findings;
  if (facts.status === 'flagged') findings.push({ ...base, kind: 'flagged', ...provider });
  else if (settled !== undefined) findings.push({ ...base, kind: 'uncredited', ...provider });
  else if (verified === undefined) findings.push({ ...base, kind: 'unverified' });
  return findings;
}

/**
 * The auditor's reconciliation of top-ups, from the event log alone (never the read models): every
 * top-up is verified by its reference with the rail that took it and checked by `checkTopUp`, and
 * every wallet funding under `topup:<reference>` must have its top-up.
 */
export async function reconcilePayments(store: EventStore, railOf: (name: Rail) => PaymentRail | undefined): Promise<PaymentReconciliation> {
  const { topUps, fundings } = await readTopUpLog(store);
  const findings: PaymentFinding[] = [];
  let credited = 0;
  let creditedKobo = 0;
  for (const [reference, facts] of topUps) {
    if (facts.creditedKobo !== null) {
      credited++;
      creditedKobo += facts.creditedKobo;
    }
    findings.push(...checkTopUp(reference, facts, fundings.get(reference)?.amounts ?? [], await ask(railOf, facts.rail, reference)));
  }
  for (const [reference, funding] of fundings) {
    if (topUps.has(reference)) continue;
    findings.push({
      kind: 'funding_without_top_up',
      reference,
      organizationId: funding.organizationId,
      environment: funding.environment,
      rail: '',
      creditedKobo: null,
      fundedKobo: funding.amounts.reduce((sum, amount) => sum + amount, 0),
      providerKobo: null,
      providerStatus: null,
    });
  }
  return { topUps: topUps.size, credited, creditedKobo, findings };
}

const CSV_COLUMNS: readonly (keyof PaymentFinding)[] = [
  'kind',
  'reference',
  'organizationId',
  'environment',
  'rail',
  'creditedKobo',
  'fundedKobo',
  'providerKobo',
  'providerStatus',
];

/** The findings as CSV (a header line, then one line per finding; no field needs quoting but every one is quoted anyway). */
export function findingsCsv(findings: readonly PaymentFinding[]): string {
  const cell = (value: unknown) => `"${(typeof value === 'string' ? value : value === null || value === undefined ? '' : JSON.stringify(value)).replace(/"/g, '""')}"`;
  return [CSV_COLUMNS.join(','), ...findings.map((finding) => CSV_COLUMNS.map((column) => cell(finding[column])).join(','))].join('\n') + '\n';
}

/** What the auditor's console page flags on a top-up. */
export type TopUpFlag =
  /** Credited, and the wallet funding (or its absence) or the provider's amount differs; funded and not credited; or held for an operator. */
  | 'mismatch'
  /** The provider settled it and the wallet was not credited (or held). */
  | 'uncredited'
  /** Its reference funded the wallet more than once. */
  | 'duplicate'
  /** Credited, and the provider does not confirm it. */
  | 'missing_at_provider'
  /** The provider could not be asked now. */
  | 'unverified';

export interface TopUpReconciliationRow {
  readonly reference: string;
  readonly status: string;
  readonly rail: string;
  readonly initiatedKobo: number;
  readonly providerStatus: string | null;
  /** What the provider settled (its verified amount, on a success). */
  readonly settledKobo: number | null;
  readonly feesKobo: number | null;
  readonly creditedKobo: number | null;
  /** What the wallet's fundings under the top-up's reference add up to. */
  readonly fundedKobo: number;
  readonly flags: readonly TopUpFlag[];
}

export interface WalletPaymentsReconciliation {
  readonly topUps: readonly TopUpReconciliationRow[];
  readonly totals: { readonly count: number; readonly settledKobo: number; readonly creditedKobo: number; readonly feesKobo: number; readonly flagged: number };
  /** The most recent top-ups shown and verified; older ones are left to `npm run audit:payments`. */
  readonly limit: number;
}

/** How many of a wallet's most recent top-ups the console's reconciliation verifies with the provider per look. */
export const WALLET_RECONCILIATION_LIMIT = 100;

/**
 * The auditor's console page: one wallet's most recent top-ups, from the event log as the CLI reads
 * it, each verified with its rail by reference and checked by the CLI's own `checkTopUp`; its
 * findings shown as the page's flags.
 */
export async function reconcileWalletPayments(
  store: EventStore,
  railOf: (name: Rail) => PaymentRail | undefined,
  wallet: { organizationId: string; environment: string },
): Promise<WalletPaymentsReconciliation> {
  const { topUps, fundings } = await readTopUpLog(store, wallet);
  const recent = [...topUps].slice(-WALLET_RECONCILIATION_LIMIT).reverse();
  const rows: TopUpReconciliationRow[] = [];
  for (const [reference, facts] of recent) {
    const funded = fundings.get(reference)?.amounts ?? [];
    const verified = await ask(railOf, facts.rail, reference);
    const settled = verified?.status === 'success' && verified.currency === 'NGN' ? verified.amountKobo : null;
    const kinds = new Set(checkTopUp(reference, facts, funded, verified).map((finding) => finding.kind));
    const flags: TopUpFlag[] = [];
    if (kinds.has('mismatched') || kinds.has('missing_funding') || kinds.has('funding_without_top_up') || kinds.has('flagged')) flags.push('mismatch');
    if (kinds.has('uncredited') || (kinds.has('flagged') && settled !== null)) flags.push('uncredited');
    if (kinds.has('duplicate')) flags.push('duplicate');
    if (kinds.has('missing_at_provider')) flags.push('missing_at_provider');
    if (kinds.has('unverified')) flags.push('unverified');
    rows.push({
      reference,
      status: facts.status,
      rail: facts.rail,
      initiatedKobo: facts.initiatedKobo,
      providerStatus: verified === undefined ? null : (verified?.status ?? 'not_found'),
      settledKobo: settled,
      feesKobo: verified?.status === 'success' ? verified.feesKobo : null,
      creditedKobo: facts.creditedKobo,
      fundedKobo: funded.reduce((sum, amount) => sum + amount, 0),
      flags,
    });
  }
  const sum = (pick: (row: TopUpReconciliationRow) => number | null) => rows.reduce((total, row) => total + (pick(row) ?? 0), 0);
  return {
    topUps: rows,
    totals: {
      count: rows.length,
      settledKobo: sum((row) => row.settledKobo),
      creditedKobo: sum((row) => row.creditedKobo),
      feesKobo: sum((row) => row.feesKobo),
      flagged: rows.filter((row) => row.flags.length > 0).length,
    },
    limit: WALLET_RECONCILIATION_LIMIT,
  };
}
