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
  readonly credited: number;
  readonly creditedKobo: number;
  readonly findings: readonly PaymentFinding[];
}

interface TopUpFacts {
  organizationId: string;
  environment: string;
  rail: string;
  creditedKobo: number | null;
}

/**
 * The auditor's reconciliation of top-ups, from the event log alone (never the read models): every
 * credited top-up is verified by its reference with the rail that took it, and matched against the
 * wallet fundings made under `topup:<reference>`, in both directions.
 */
export async function reconcilePayments(store: EventStore, railOf: (name: Rail) => PaymentRail | undefined): Promise<PaymentReconciliation> {
  const topUps = new Map<string, TopUpFacts>();
  const fundings = new Map<string, { organizationId: string; environment: string; amounts: number[] }>();
  for (let from: bigint | undefined; ;) {
    const page: RecordedEvent[] = await store.readAll({ fromPosition: from, maxCount: PAGE, filter: { streamCategories: [TOPUP_CATEGORY], eventTypes: ['WalletFunded'] } });
    for (const event of page) {
      const data = event.data as Record<string, unknown>;
      if (event.type === 'WalletFunded') {
        const reference = String(data.fundingReference);
        if (!reference.startsWith(FUNDING_PREFIX)) continue;
        const key = reference.slice(FUNDING_PREFIX.length);
        const entry = fundings.get(key) ?? { organizationId: String(data.organizationId), environment: String(data.environment), amounts: [] };
        entry.amounts.push(Number(data.amountKobo));
        fundings.set(key, entry);
      } else if (event.type === 'TopUpInitiated') {
        topUps.set(String(data.reference), { organizationId: String(data.organizationId), environment: String(data.environment), rail: String(data.rail), creditedKobo: null });
      } else if (event.type === 'TopUpCredited') {
        const facts = topUps.get(String(data.reference));
        if (facts !== undefined) facts.creditedKobo = Number(data.amountKobo);
      }
    }
    if (page.length < PAGE) break;
    from = page[page.length - 1].position;
  }

  const findings: PaymentFinding[] = [];
  let credited = 0;
  let creditedKobo = 0;
  for (const [reference, facts] of topUps) {
    if (facts.creditedKobo === null) continue;
    credited++;
    creditedKobo += facts.creditedKobo;
    const funded = fundings.get(reference)?.amounts ?? [];
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
    if (funded.length === 0) findings.push({ ...base, kind: 'missing_funding' });
    else if (funded.length > 1) findings.push({ ...base, kind: 'duplicate', fundedKobo: funded.reduce((sum, amount) => sum + amount, 0) });
    else if (funded[0] !== facts.creditedKobo) findings.push({ ...base, kind: 'mismatched' });
    const rail = railOf(facts.rail as Rail);
    let verified;
    try {
      verified = rail === undefined ? undefined : await rail.verify(reference);
    } catch {
      verified = undefined;
    }
    if (verified === undefined) findings.push({ ...base, kind: 'unverified' });
    else if (verified === null || verified.status !== 'success') findings.push({ ...base, kind: 'missing_at_provider', providerStatus: verified?.status ?? 'not_found' });
    else if (verified.amountKobo !== facts.creditedKobo || verified.currency !== 'NGN')
      findings.push({ ...base, kind: 'mismatched', providerKobo: verified.amountKobo, providerStatus: verified.status });
  }
  for (const [reference, funding] of fundings) {
    if (topUps.get(reference)?.creditedKobo !== undefined && topUps.get(reference)?.creditedKobo !== null) continue;
    findings.push({
      kind: 'funding_without_top_up',
      reference,
      organizationId: funding.organizationId,
      environment: funding.environment,
      rail: topUps.get(reference)?.rail ?? '',
      creditedKobo: null,
      fundedKobo: funding.amounts.reduce((sum, amount) => sum + amount, 0),
      providerKobo: null,
      providerStatus: null,
    });
  }
  return { credited, creditedKobo, findings };
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
  /** Credited, and the wallet funding or the provider's amount differs; or held for an operator (amounts disagreed). */
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
 * it, each verified with its rail by reference and matched against the wallet's fundings.
 */
export async function reconcileWalletPayments(
  store: EventStore,
  railOf: (name: Rail) => PaymentRail | undefined,
  wallet: { organizationId: string; environment: string },
): Promise<WalletPaymentsReconciliation> {
  const topUps = new Map<string, { status: string; rail: string; initiatedKobo: number; creditedKobo: number | null }>();
  const fundings = new Map<string, number[]>();
  for (let from: bigint | undefined; ;) {
    const page: RecordedEvent[] = await store.readAll({ fromPosition: from, maxCount: PAGE, filter: { streamCategories: [TOPUP_CATEGORY], eventTypes: ['WalletFunded'] } });
    for (const event of page) {
      const data = event.data as Record<string, unknown>;
      if (data.organizationId !== wallet.organizationId || data.environment !== wallet.environment) continue;
      if (event.type === 'WalletFunded') {
        const reference = String(data.fundingReference);
        if (reference.startsWith(FUNDING_PREFIX))
          fundings.set(reference.slice(FUNDING_PREFIX.length), [...(fundings.get(reference.slice(FUNDING_PREFIX.length)) ?? []), Number(data.amountKobo)]);
        continue;
      }
      const reference = String(data.reference);
      if (event.type === 'TopUpInitiated') {
        topUps.set(reference, { status: 'initiated', rail: String(data.rail), initiatedKobo: Number(data.amountKobo), creditedKobo: null });
        continue;
      }
      const facts = topUps.get(reference);
      if (facts === undefined) continue;
      if (event.type === 'TopUpPaid') facts.status = 'paid';
      else if (event.type === 'TopUpFailed') facts.status = 'failed';
      else if (event.type === 'TopUpFlagged') facts.status = 'flagged';
      else if (event.type === 'TopUpCredited') Object.assign(facts, { status: 'credited', creditedKobo: Number(data.amountKobo) });
    }
    if (page.length < PAGE) break;
    from = page[page.length - 1].position;
  }

  const recent = [...topUps].slice(-WALLET_RECONCILIATION_LIMIT).reverse();
  const rows: TopUpReconciliationRow[] = [];
  for (const [reference, facts] of recent) {
    const funded = fundings.get(reference) ?? [];
    const fundedKobo = funded.reduce((sum, amount) => sum + amount, 0);
    let verified: VerifiedTransaction | null | undefined;
    try {
      verified = await railOf(facts.rail as Rail)?.verify(reference);
    } catch {
      verified = undefined;
    }
    const settled = verified?.status === 'success' && verified.currency === 'NGN' ? verified.amountKobo : null;
    const flags: TopUpFlag[] = [];
    if (
      facts.status === 'flagged' ||
      (facts.creditedKobo !== null && ((funded.length > 0 && fundedKobo !== facts.creditedKobo) || (settled !== null && settled !== facts.creditedKobo)))
    )
      flags.push('mismatch');
    if (settled !== null && facts.creditedKobo === null) flags.push('uncredited');
    if (funded.length > 1) flags.push('duplicate');
    if (facts.creditedKobo !== null && verified !== undefined && settled === null) flags.push('missing_at_provider');
    if (verified === undefined) flags.push('unverified');
    rows.push({
      reference,
      status: facts.status,
      rail: facts.rail,
      initiatedKobo: facts.initiatedKobo,
      providerStatus: verified === undefined ? null : (verified?.status ?? 'not_found'),
      settledKobo: settled,
      feesKobo: verified?.status === 'success' ? verified.feesKobo : null,
      creditedKobo: facts.creditedKobo,
      fundedKobo,
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
