import type pg from 'pg';
import { inTransaction } from '../database/transaction.js';
import { tokensOf } from './blind-index.js';
import { DataKeys, versionedToken } from './data-keys.js';
import { type RetokeniseSummary, type RotationPassOptions, runRotationPass } from './rotation-pass.js';
import { SubjectIdentifiers } from './subject-identifiers.js';

/** A check's identifiers as they stand (its request and result, opened now); null when erased or gone: it keeps no token. */
export type IdentifierSource = (reference: string) => Promise<readonly Readonly<Record<string, unknown>>[] | null>;

/** Checks whose identifiers are opened at once within a batch. */
const OPENED_AT_ONCE = 8;

/**
 * The pass that ends a rotation of an organization's blind-index key (DataKeys.rotateIndexKey):
 * every check still indexed under the retiring key gets its tokens computed again, from its
 * identifiers opened now, under the current key, in batches of one transaction each (its old
 * tokens out, its new ones in, how far it got), in reference order. Lookups meanwhile try both
 * keys. Killed at any point, it resumes where the last batch ended. Once none is left, and every
 * instance has had time to drop the old key from its cache (a straggler written under it is
 * found by a last scan from the start), the retiring key is destroyed.
 *
 * Holds and the record of requests carry tokens in the log, which is never rewritten: for those
 * the pass records the subject's new token (`subject_token_successors`) when a check of the
 * subject carries it, and, before the old key goes, from the identifier kept sealed for each
 * (SubjectIdentifiers), so a subject with no check left keeps its holds and record.
 */
export class IndexKeyRotation {
  constructor(
    private readonly pool: pg.Pool,
    private readonly keys: DataKeys,
    private readonly identifiers: IdentifierSource,
    private readonly options: { readonly settleMs?: number; readonly now?: () => number } = {},
  ) {}

  run(organizationId: string, options: RotationPassOptions = {}): Promise<RetokeniseSummary> {
    return runRotationPass(this.pool, this.keys, organizationId, options, this.options, ({ current, retiring }) => {
      const prefix = `v${current.version}:`;
      return {
        count: async () => {
          const { rows } = await this.pool.query<{ n: string }>(
            'select count(distinct reference) as n from verification_subjects where organization_id = $1 and left(token, $3) <> $2',
            [organizationId, prefix, prefix.length],
          );
          return Number(rows[0].n);
        },
        rekeyAfter: async (cursor, batchSize) => {
          const { rows } = await this.pool.query<{ reference: string; environment: string }>(
            `select reference, min(environment) as environment from verification_subjects
             where reference > $4 and organization_id = $1 and left(token, $3) <> $2 group by reference order by reference limit $5`,
            [organizationId, prefix, prefix.length, cursor, batchSize],
          );
          if (rows.length === 0) return null;
          await this.retokenise(organizationId, current, retiring, rows);
          return { rows: rows.length, last: rows[rows.length - 1].reference };
        },
        retire: async () => {
          // Holds and requests of subjects with no check left: from the identifiers kept for them.
          await new SubjectIdentifiers(this.pool, this.keys).relink(organizationId, current);
          return this.keys.retireIndexKey(organizationId, current.version);
        },
        strays: `tokens of ${organizationId}`,
      };
    });
  }

  /** One batch, in one transaction: each check's tokens under the retiring key replaced by those under the current one. */
  private async retokenise(
    organizationId: string,
    current: { version: number; key: Buffer },
    retiring: { version: number; key: Buffer },
    batch: readonly { reference: string; environment: string }[],
  ): Promise<void> {
    // Opened OPENED_AT_ONCE at a time: a batch must not take every connection of the service's pool.
    const opened: (readonly Readonly<Record<string, unknown>>[] | null)[] = [];
    for (let at = 0; at < batch.length; at += OPENED_AT_ONCE)
      opened.push(...(await Promise.all(batch.slice(at, at + OPENED_AT_ONCE).map(async ({ reference }) => this.identifiers(reference)))));
    const inserted: { environment: string; token: string; reference: string }[] = [];
    const successors = new Map<string, string>();
    batch.forEach(({ reference, environment }, i) => {
      const sources = opened[i];
      if (sources === null) return;
      // tokensOf gives an identifier's token at the same place under either key.
      const newTokens = tokensOf(current.key, ...sources).map((token) => versionedToken(current.version, token));
      const oldTokens = tokensOf(retiring.key, ...sources).map((token) => versionedToken(retiring.version, token));
      newTokens.forEach((token, j) => {
        inserted.push({ environment, token, reference });
        successors.set(oldTokens[j], token);
      });
    });
    const references = batch.map(({ reference }) => reference);
    const prefix = `v${current.version}:`;
    await inTransaction(this.pool, async (client) => {
      // Locked before the tokens go in: an erasure of one of them waits for this batch, then removes what it wrote (DataKeys.destroy).
      const { rows: keys } = await client.query<{ reference: string; erased: boolean }>(
        'select reference, wrapped_key is null as erased from verification_keys where reference = any($1::text[]) order by reference for share',
        [references],
      );
      const erased = new Set(keys.filter((row) => row.erased).map((row) => row.reference));
      const kept = inserted.filter((row) => !erased.has(row.reference));
      await client.query('delete from verification_subjects where organization_id = $1 and reference = any($2::text[]) and left(token, $4) <> $3', [
        organizationId,
        references,
        prefix,
        prefix.length,
      ]);
      await client.query(
        `insert into verification_subjects (organization_id, environment, token, reference)
         select $1, u.environment, u.token, u.reference from unnest($2::text[], $3::text[], $4::text[]) as u(environment, token, reference)
         on conflict do nothing`,
        [organizationId, kept.map((row) => row.environment), kept.map((row) => row.token), kept.map((row) => row.reference)],
      );
      const [olds, news] = [[...successors.keys()], [...successors.values()]];
      await client.query(
        'update subject_token_successors m set new_token = p.new from unnest($2::text[], $3::text[]) as p(old, new) where m.organization_id = $1 and m.new_token = p.old',
        [organizationId, olds, news],
      );
      await client.query(
        `insert into subject_token_successors (organization_id, old_token, new_token)
         select $1, p.old, p.new from unnest($2::text[], $3::text[]) as p(old, new)
         where p.old in (select subject_token from data_holds where organization_id = $1 union select subject_token from data_requests where organization_id = $1)
         on conflict (organization_id, old_token) do update set new_token = excluded.new_token`,
        [organizationId, olds, news],
      );
      await client.query('update organization_keys set retokenised_through = $2 where organization_id = $1 and index_version = $3', [
        organizationId,
        references[references.length - 1],
        current.version,
      ]);
    });
  }
}
