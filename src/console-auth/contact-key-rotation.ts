import type pg from 'pg';
import { inTransaction } from '../database/transaction.js';
import { CONSOLE_CONTACT_SCOPE, ContactData, ERASED_CONTACT, lookupKeyPrefix } from '../data-protection/contact-data.js';
import type { DataKeys, IndexKeyVersion } from '../data-protection/data-keys.js';
import { type RetokeniseSummary, type RotationPassOptions, runRotationPass } from '../data-protection/rotation-pass.js';
import { userEmailContext } from './accounts.js';

/** An email_key not under the lookup key's version (`$1` its prefix, `$2` that prefix's length): keyed hashes only, never a legacy clear value. */
const STALE = `email_key like 'h1:%' and left(email_key, $2) <> $1`;

/**
 * The pass that ends a rotation of the console's contact lookup key (`console:contacts`'s index
 * key, started by DataKeys.rotateIndexKey): every console user's `email_key` still under the
 * retiring key is computed again from the email opened now, under the current key, a transaction
 * per batch; then those of the sign-ups not yet carried out (`console_signups`), which a sign-in or
 * a second sign-up with the address must still find. Meanwhile sign-in, sign-up, invitations and password resets find an address under
 * either key (ContactData.lookupKeys, read fresh on every instance) and a new account is refused
 * when either is taken. Rerun after a stop, it goes on with the rows left. Once none is left and
 * every instance has dropped the old key from its cache, the retiring key is destroyed.
 */
export class ContactKeyRotation {
  constructor(
    private readonly pool: pg.Pool,
    private readonly keys: DataKeys,
    private readonly contacts: ContactData,
    private readonly options: { readonly settleMs?: number; readonly now?: () => number } = {},
  ) {}

  run(options: RotationPassOptions = {}): Promise<RetokeniseSummary> {
    return runRotationPass(this.pool, this.keys, CONSOLE_CONTACT_SCOPE, options, this.options, ({ current }) => {
      const prefix = lookupKeyPrefix(current.version);
      return {
        count: async () =>
          Number(
            (
              await this.pool.query<{ n: string }>(`select (select count(*) from console_users where ${STALE}) + (select count(*) from console_signups where ${STALE}) as n`, [
                prefix,
                prefix.length,
              ])
            ).rows[0].n,
          ),
        rekeyAfter: async (cursor, batchSize) => (await this.rekeyUsers(prefix, cursor, batchSize, current)) ?? (await this.rekeySignUps(prefix, cursor, batchSize, current)),
        retire: () =>
          this.keys.retireIndexKey(
            CONSOLE_CONTACT_SCOPE,
            current.version,
            async (client: pg.PoolClient) =>
              (await client.query(`select 1 from console_users where ${STALE} union all select 1 from console_signups where ${STALE} limit 1`, [prefix, prefix.length])).rows
                .length > 0,
          ),
        strays: 'console contact lookup keys',
      };
    });
  }

  /** The next batch of console users after `cursor` whose email_key is stale, re-keyed; null when none is left. */
  private async rekeyUsers(prefix: string, cursor: string, batchSize: number, current: IndexKeyVersion): Promise<{ rows: number; last: string } | null> {
    const { rows } = await this.pool.query<{ id: string; organization_id: string | null; email: string; email_key: string }>(
      `select id, organization_id, email, email_key from console_users where id > $3 and ${STALE} order by id limit $4`,
      [prefix, prefix.length, cursor, batchSize],
    );
    if (rows.length === 0) return null;
    const rekeyed = await Promise.all(
      rows.map(async (row) => {
        const email = await this.contacts.open(row.organization_id, userEmailContext(row.id), row.email);
        // An account whose email no longer opens (its key destroyed) is found by no address: a key of its own that none computes.
        return this.contacts.lookupKeyUnder(current, 'email', email === ERASED_CONTACT ? `\u0000${row.id}` : email);
      }),
    );
    await inTransaction(this.pool, async (client) => {
      await client.query(
        `update console_users c set email_key = u.new from unnest($1::text[], $2::text[], $3::text[]) as u(id, old, new) where c.id = u.id and c.email_key = u.old`,
        [rows.map((row) => row.id), rows.map((row) => row.email_key), rekeyed],
      );
    });
    return { rows: rows.length, last: rows[rows.length - 1].id };
  }

  /**
   * A batch of the sign-ups not yet carried out whose email_key is stale, re-keyed (the cursor, past
   * every user, stays); null when none is left. A sign-up carried out meanwhile is gone, and one whose
   * key changed meanwhile is left as it is: neither is selected again.
   */
  private async rekeySignUps(prefix: string, cursor: string, batchSize: number, current: IndexKeyVersion): Promise<{ rows: number; last: string } | null> {
    const { rows } = await this.pool.query<{ user_id: string; email: string; email_key: string }>(
      `select user_id, email, email_key from console_signups where ${STALE} order by user_id limit $3`,
      [prefix, prefix.length, batchSize],
    );
    if (rows.length === 0) return null;
    const rekeyed = await Promise.all(rows.map(async (row) => this.contacts.lookupKeyUnder(current, 'email', await this.contacts.open(null, 'console_signups.email', row.email))));
    await this.pool.query(
      `update console_signups s set email_key = u.new from unnest($1::text[], $2::text[], $3::text[]) as u(id, old, new) where s.user_id = u.id and s.email_key = u.old`,
      [rows.map((row) => row.user_id), rows.map((row) => row.email_key), rekeyed],
    );
    return { rows: rows.length, last: cursor };
  }
}
