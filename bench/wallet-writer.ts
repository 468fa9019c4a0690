import { randomUUID } from 'node:crypto';
import { toAppend } from '../src/common/event.js';
import { streams } from '../src/common/streams.js';
import type { EventToAppend } from '../src/event-store/event-store.port.js';
import type { PostgresEventStore } from '../src/event-store/postgres-event-store.js';
import { GENESIS_LINK, linkFor } from '../src/wallets/wallet-chain.js';
import type { WalletId } from '../src/wallets/wallet-ledger.port.js';
import { format, status } from './bench-support.js';

export const ROUND_RESERVATIONS = 100;
const PRICE_KOBO = 10_000;
const CONTEXT = { correlationId: 'bench-wallet', actor: { type: 'system' as const, id: 'bench' } };

/**
 * A wallet of about `events` events, appended straight to the log 1,000 at a time with the ledger's
 * own chain function (wallet-chain.ts), as the ledger would write them: fund, then rounds of
 * reservations followed by captures (80 %) and releases (20 %). Returns the exact count.
 */
export async function writeWallet(store: PostgresEventStore, wallet: WalletId, events: number): Promise<number> {
  const streamId = streams.wallet(wallet.organizationId, wallet.environment);
  const rounds = Math.max(1, Math.floor((events - 1) / (2 * ROUND_RESERVATIONS)));
  const base = { organizationId: wallet.organizationId, environment: wallet.environment, schemaVersion: 1 };
  let link = GENESIS_LINK;
  let revision = -1n;
  let pending: EventToAppend[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    await store.append(streamId, pending, { expectedRevision: revision - BigInt(pending.length) < 0n ? 'no_stream' : revision - BigInt(pending.length) });
    pending = [];
  };
  const add = async (type: string, data: Record<string, string | number>) => {
    revision++;
    const unchained = toAppend({ type, data: { ...base, ...data } }, randomUUID(), CONTEXT, new Date());
    const chain = linkFor(link, { ...unchained, streamId, revision });
    link = chain.hash;
    pending.push({ ...unchained, metadata: { ...unchained.metadata, chain } });
    if (pending.length >= 1_000) await flush();
  };
  await add('WalletFunded', { fundingReference: 'bench-funding', amountKobo: rounds * ROUND_RESERVATIONS * PRICE_KOBO });
  for (let round = 0; round < rounds; round++) {
    const references = Array.from({ length: ROUND_RESERVATIONS }, (_, i) => `vrf_bench_${wallet.environment}_${round}_${i}`);
    for (const reference of references) await add('WalletFundsReserved', { reference, amountKobo: PRICE_KOBO, scope: 'nin' });
    for (const [i, reference] of references.entries()) {
      if (i % 5 === 4) await add('WalletReservationReleased', { reference, amountKobo: PRICE_KOBO, reason: 'provider_failed' });
      else await add('WalletDebited', { reference, amountKobo: PRICE_KOBO });
    }
    if ((round + 1) % 200 === 0) status(`  ${format(Number(revision) + 1)} events`);
  }
  await flush();
  return Number(revision) + 1;
}
