import type { LogFolds } from '../../src/event-store/event-store.port.js';
import { WALLET_LEDGER_TABLE } from '../../src/wallets/wallet.read-model.js';
import type { DatabaseFold, DatabaseFolder, ProjectionContext } from '../projection.js';

/**
 * walletLedgerProjection.foldInDatabase: the ledger's lines in one statement of the log's folds
 * (LogFolds.walletLedgerLines), checked by LogFolds.walletLedgerOddEvents. Declines what `handle`
 * would refuse (a negative figure) or compute otherwise (beyond exact integers).
 */
export function walletLedgerFolder(folds: LogFolds, categories: readonly string[]): DatabaseFolder {
  return {
    oddEvents: (run, upToPosition) => folds.walletLedgerOddEvents(run, categories, upToPosition),
    async fold(context: ProjectionContext, upToPosition: bigint, part: number, parts: number): Promise<DatabaseFold> {
      const written = await folds.walletLedgerLines(context.query.bind(context), context.table(WALLET_LEDGER_TABLE), categories, upToPosition, part, parts);
      if (written.negative > 0) return { outcome: 'declined', reason: 'a wallet would show a negative figure' };
      if (written.inexact > 0) return { outcome: 'declined', reason: 'an amount or figure beyond the integers a JavaScript number holds exactly' };
      return { outcome: 'folded' };
    },
  };
}
