/**
 * Group commit: many small writes made at once share one statement and one commit.
 *
 * A write submitted while `maxInFlight` batches are being written waits for one of them and is
 * then written with every other write waiting by then (up to `maxItems`, and `maxWeight` by the
 * items' `weight`), through `writeMany`. Alone, a write goes at once through `writeOne`: no added
 * latency when idle, one commit for many writes under load. When a batch fails as a whole for a
 * reason that may belong to one of its writes, each is tried again on its own, so only the one at
 * fault fails; `fatal` names the errors (a lost connection, say) that fail the whole batch at once.
 */
export interface GroupCommitOptions<Item, Result> {
  /** Batches written at once: two keep PostgreSQL busy while the next batch gathers. */
  readonly maxInFlight: number;
  /** The most writes one batch takes. */
  readonly maxItems: number;
  /** With `weight`: the most weight one batch takes (its first write is always taken). */
  readonly maxWeight?: number;
  readonly weight?: (item: Item) => number;
  readonly writeOne: (item: Item) => Promise<Result>;
  /**
   * Writes several in one transaction and answers each one's outcome, in order. Throwing means
   * nothing of the batch was written.
   */
  readonly writeMany: (items: readonly Item[]) => Promise<readonly PromiseSettledResult<Result>[]>;
  /** The error every write of a failed batch is rejected with, or undefined to try each alone. */
  readonly fatal?: (error: unknown) => unknown;
}

interface Pending<Item, Result> {
  readonly item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

export class GroupCommit<Item, Result> {
  private readonly waiting: Pending<Item, Result>[] = [];
  private inFlight = 0;

  constructor(private readonly options: GroupCommitOptions<Item, Result>) {}

  write(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.writeWaiting();
    });
  }

  private writeWaiting(): void {
    const { maxInFlight, maxItems, maxWeight = Infinity, weight = () => 0 } = this.options;
    while (this.inFlight < maxInFlight && this.waiting.length > 0) {
      let taken = 0;
      let count = 0;
      while (count < this.waiting.length && count < maxItems && (count === 0 || taken + weight(this.waiting[count].item) <= maxWeight)) {
        taken += weight(this.waiting[count].item);
        count += 1;
      }
      const batch = this.waiting.splice(0, count);
      this.inFlight += 1;
      void (batch.length === 1 ? this.writeAlone(batch[0]) : this.writeBatch(batch)).finally(() => {
        this.inFlight -= 1;
        this.writeWaiting();
      });
    }
  }

  private async writeAlone(pending: Pending<Item, Result>): Promise<void> {
    try {
      pending.resolve(await this.options.writeOne(pending.item));
    } catch (error) {
      pending.reject(error);
    }
  }

  private async writeBatch(batch: readonly Pending<Item, Result>[]): Promise<void> {
    let outcomes: readonly PromiseSettledResult<Result>[];
    try {
      outcomes = await this.options.writeMany(batch.map((pending) => pending.item));
    } catch (error) {
      const fatal = this.options.fatal?.(error);
      if (fatal !== undefined) {
        for (const pending of batch) pending.reject(fatal);
        return;
      }
      await Promise.all(batch.map((pending) => this.writeAlone(pending)));
      return;
    }
    batch.forEach((pending, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined) pending.reject(new Error(`a group commit answered ${outcomes.length} outcomes for ${batch.length} writes`));
      else if (outcome.status === 'fulfilled') pending.resolve(outcome.value);
      else pending.reject(outcome.reason);
    });
  }
}
