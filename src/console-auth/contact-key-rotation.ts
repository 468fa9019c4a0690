import type pg from 'pg';
import { inTransaction } from '../database/transaction.js';
import { CONSOLE_CONTACT_SCOPE, ContactData, ERASED_CONTACT, lookupKeyPrefix } from '../data-protection/contact-data.js';
import type { DataKeys } from '../data-protection/data-keys.js';
import { type RetokeniseSummary, type RotationPassOptions, runRotationPass } from '../data-protection/rotation-pass.js';
import { userEmailContext } from './accounts.js';

/** A console user's email_key not under the lookup key's version `$2` (`$1` its prefix): keyed hashes only, never a legacy clear value. */
const STALE = `email_key like 'h1:%' and left(email_key, $2) <> $1`;

/**
 * The pass that ends a rotation of the console's contact lookup key (`console:contacts`'s index
 * key, started by DataKeys.rotateIndexKey): every console user's `email_key` still under the
 * retiring key is computed again from the email opened now, under the current key, a transaction
 * per batch. Meanwhile sign-in, sign-up, invitations and password resets find an address under
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
        count: async () => Number((await this.pool.query<{ n: string }>(`select count(*) as n from console_users where ${STALE}`, [prefix, prefix.length])).rows[0].n),
        rekeyAfter: async (cursor, batchSize) => {
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
        },
        retire: () =>
          this.keys.retireIndexKey(
            CONSOLE_CONTACT_SCOPE,
            current.version,
            async (client: pg.PoolClient) => (await client.query(`select 1 from console_users where ${STALE} limit 1`, [prefix, prefix.length])).rows.length > 0,
          ),
        strays: 'console contact lookup keys',
      };
    });
  }
}
