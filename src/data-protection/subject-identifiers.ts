import type pg from 'pg';
import { tokenOf } from './blind-index.js';
import { type DataKeys, type IndexKeyVersion, versionedToken } from './data-keys.js';

/** Remembered identifiers re-tokenised per statement. */
const RELINK_BATCH = 500;

/** What a remembered identifier is sealed under its organization's KEK bound to: the token it stands behind. */
const sealContext = (token: string) => `subject-identifier\n${token}`;

/**
 * The identifiers behind the tokens that holds and data-subject requests carry in the log
 * (`subject_identifiers`), sealed under the organization's key-encryption key (so offboarding
 * destroys them with the rest), in normalised form. A rotation of the index key re-tokenises them
 * (relink), so a hold or a record keeps finding its subject under the new key even when no check of
 * the subject is left to link it (IndexKeyRotation).
 */
export class SubjectIdentifiers {
  constructor(
    private readonly pool: pg.Pool,
    private readonly keys: DataKeys,
  ) {}

  /** Keeps the identifier (normalised: blind-index.ts normalisedSubject) behind `token`, once per token. */
  async remember(organizationId: string, token: string, normalised: string): Promise<void> {
    const { rows } = await this.pool.query('select 1 from subject_identifiers where organization_id = $1 and token = $2', [organizationId, token]);
    if (rows.length > 0) return;
    const [sealed] = await this.keys.sealForOrganization(organizationId, [{ plain: Buffer.from(normalised, 'utf8'), context: sealContext(token) }]);
    await this.pool.query('insert into subject_identifiers (organization_id, token, sealed_identifier) values ($1, $2, $3) on conflict do nothing', [
      organizationId,
      token,
      sealed,
    ]);
  }

  /**
   * Links every remembered token of the organization that is not under `current` to the subject's
   * token under it (`subject_token_successors`, which the holds' and requests' lookups follow);
   * answers how many. Rerunnable: a link already made is written again, the same.
   */
  async relink(organizationId: string, current: IndexKeyVersion): Promise<number> {
    const prefix = `v${current.version}:`;
    let cursor = '';
    let linked = 0;
    for (;;) {
      const { rows } = await this.pool.query<{ token: string; sealed_identifier: string }>(
        `select token, sealed_identifier from subject_identifiers where organization_id = $1 and token > $2 and left(token, $4) <> $3 order by token limit $5`,
        [organizationId, cursor, prefix, prefix.length, RELINK_BATCH],
      );
      if (rows.length === 0) return linked;
      cursor = rows[rows.length - 1].token;
      const opened = await this.keys.openForOrganization(
        organizationId,
        rows.map((row) => ({ sealed: row.sealed_identifier, context: sealContext(row.token) })),
      );
      const news = opened.map((normalised) => {
        try {
          return versionedToken(current.version, tokenOf(current.key, normalised.toString('utf8')));
        } finally {
          normalised.fill(0);
        }
      });
      await this.pool.query(
        `insert into subject_token_successors (organization_id, old_token, new_token)
         select $1, p.old, p.new from unnest($2::text[], $3::text[]) as p(old, new)
         on conflict (organization_id, old_token) do update set new_token = excluded.new_token`,
        [organizationId, rows.map((row) => row.token), news],
      );
      linked += rows.length;
    }
  }
}
