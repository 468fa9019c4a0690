import { createHmac } from 'node:crypto';
import type pg from 'pg';
import { pooledRandomBytes } from '../common/random.js';
import { DataKeys, type IndexKeyVersion, OrganizationKeysDestroyed, versionedToken } from './data-keys.js';
import { KEY_BYTES, openBytes, sealBytes } from './sealing.js';

/**
 * The keys of contact data that belongs to no organization (operators' emails, the console's
 * sessions, mail and the lookup index): a row of `organization_keys` of its own, so it is wrapped
 * under the master key and moved by `keys rotate-master` like every organization's. Never an
 * organization id (those are `org_…`), so no offboarding can destroy it.
 */
export const CONSOLE_CONTACT_SCOPE = 'console:contacts';

/** What a sealed contact value starts with; a value without it is a legacy clear value. */
export const SEALED_PREFIX = 'c1:';
/**
 * What a value sealed under a console user's own key starts with (after SEALED_PREFIX): `u:`, the
 * user's id and `:`. Never the start of the other sealed form (base64, or `v<n>:`).
 */
const USER_KEY_MARK = 'u:';

/** What a console user's own key is wrapped under its owner's KEK with, and what a value sealed under that key is bound to. */
const userKeyContext = (userId: string) => `console-user-key:${userId}`;
const userSealAad = (userId: string, context: string) => Buffer.from(`ivl-user-contact/1\n${userId}\n${context}`, 'utf8');

/** A statement runner: the pool, or the transaction of a recorded change. */
type Db = Pick<pg.PoolClient, 'query'>;

/** What a lookup key starts with; a key without it is a legacy clear (lower-cased) value. */
const LOOKUP_PREFIX = 'h1:';

/** A lookup key under version n > 1 of the key: `h1:v<n>:…` (DataKeys.versionedToken). */
export const lookupKeyPrefix = (version: number): string => (version === 1 ? LOOKUP_PREFIX : `${LOOKUP_PREFIX}v${version}:`);

function lookupHash(key: Buffer, kind: LookupKind, value: string): string {
  const normalised = kind === 'email' ? normaliseEmail(value) : value.trim();
  return createHmac('sha256', key).update(`${kind}\n${normalised}`, 'utf8').digest('base64url');
}

/** What an erased value (its organization offboarded) reads as. */
export const ERASED_CONTACT = '';

export type LookupKind = 'email' | 'address';

export const isSealedContact = (value: string): boolean => value.startsWith(SEALED_PREFIX);
export const isContactLookupKey = (value: string): boolean => value.startsWith(LOOKUP_PREFIX);

/** Emails compare without case and surrounding spaces. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/**
 * Contact data of organizations and console users (emails, client addresses, user agents, mail):
 * sealed with AES-256-GCM under the owning organization's key-encryption key (DataKeys
 * sealForOrganization; CONSOLE_CONTACT_SCOPE's for what no organization owns), each value bound to
 * the row and field it belongs to, so offboarding destroys the organization's with its other
 * personal data and deleting a row leaves nothing. Lookups (sign-in by email, throttling by email
 * or address) use HMAC-SHA-256 under CONSOLE_CONTACT_SCOPE's blind-index key instead of the value.
 */
export class ContactData {
  constructor(
    private readonly keys: DataKeys,
    private readonly pool: pg.Pool,
  ) {}

  /**
   * Seals `value` (the user's email) under the console user's own key, made at its first use and
   * kept wrapped under its owner's KEK (`console_user_keys`), bound to the user and `context`:
   * destroying that key (destroyUserKey, when the user deletes the account) makes every copy
   * unreadable, backups included, while the owner's other contact data stays.
   */
  async sealForUser(owner: string | null, userId: string, context: string, value: string): Promise<string> {
    const key = await this.userKey(owner, userId);
    if (key === undefined) throw new OrganizationKeysDestroyed(new Date(0));
    try {
      return `${SEALED_PREFIX}${USER_KEY_MARK}${userId}:${sealBytes(key, Buffer.from(value, 'utf8'), userSealAad(userId, context)).toString('base64')}`;
    } finally {
      key.fill(0);
    }
  }

  /** Crypto-shreds what was sealed under the user's own key (idempotent; answers when). */
  async destroyUserKey(owner: string | null, userId: string, at: Date, db: Db = this.pool): Promise<Date> {
    const { rows } = await db.query<{ destroyed_at: Date }>(
      `insert into console_user_keys (user_id, owner, wrapped_key, destroyed_at) values ($1, $2, null, $3)
       on conflict (user_id) do update set wrapped_key = null, destroyed_at = coalesce(console_user_keys.destroyed_at, excluded.destroyed_at)
       returning destroyed_at`,
      [userId, owner ?? CONSOLE_CONTACT_SCOPE, at],
    );
    return rows[0]?.destroyed_at ?? at;
  }

  /** The user's own key (made when it has none; a copy, the caller's to wipe); undefined once destroyed. */
  private async userKey(owner: string | null, userId: string, create = true): Promise<Buffer | undefined> {
    const read = async () =>
      (await this.pool.query<{ owner: string; wrapped_key: string | null }>('select owner, wrapped_key from console_user_keys where user_id = $1', [userId])).rows[0];
    let row = await read();
    if (row === undefined) {
      if (!create) return undefined;
      const key = pooledRandomBytes(KEY_BYTES);
      try {
        const [wrapped] = await this.keys.sealForOrganization(owner ?? CONSOLE_CONTACT_SCOPE, [{ plain: key, context: userKeyContext(userId) }]);
        await this.pool.query('insert into console_user_keys (user_id, owner, wrapped_key) values ($1, $2, $3) on conflict (user_id) do nothing', [
          userId,
          owner ?? CONSOLE_CONTACT_SCOPE,
          wrapped,
        ]);
      } finally {
        key.fill(0);
      }
      row = await read();
    }
    if (row === undefined || row.wrapped_key === null) return undefined;
    const [key] = await this.keys.openForOrganization(row.owner, [{ sealed: row.wrapped_key, context: userKeyContext(userId) }]);
    return key;
  }

  /** The keyed hash a row is stored with and counted by (an email's is case-blind), under the current version of the lookup key. */
  async lookupKey(kind: LookupKind, value: string): Promise<string> {
    return (await this.lookupKeys(kind, value))[0];
  }

  /**
   * The keyed hashes a row is found by: under the current lookup key, and under the one a rotation
   * is retiring while its pass (console-auth/contact-key-rotation.ts) re-keys the rows. The
   * versions are read now, so every instance sees a rotation at once.
   */
  async lookupKeys(kind: LookupKind, value: string): Promise<string[]> {
    const tokens = await this.keys.subjectTokens(CONSOLE_CONTACT_SCOPE, (key) => lookupHash(key, kind, value));
    return tokens.map((token) => LOOKUP_PREFIX + token);
  }

  /** The keyed hash under one version of the lookup key (a rotation's pass). */
  lookupKeyUnder(key: IndexKeyVersion, kind: LookupKind, value: string): string {
    return LOOKUP_PREFIX + versionedToken(key.version, lookupHash(key.key, kind, value));
  }

  /** Seals `value` for `owner` (an organization id; null: the console's own), bound to `context` (the row and field). */
  async seal(owner: string | null, context: string, value: string): Promise<string> {
    const [sealed] = await this.keys.sealForOrganization(owner ?? CONSOLE_CONTACT_SCOPE, [{ plain: Buffer.from(value, 'utf8'), context: `contact:${context}` }]);
    return SEALED_PREFIX + sealed;
  }

  async sealNullable(owner: string | null, context: string, value: string | null): Promise<string | null> {
    return value === null ? null : this.seal(owner, context, value);
  }

  /**
   * Opens what `seal` sealed; a legacy clear value (not yet sealed by the start-up pass) as it is;
   * ERASED_CONTACT when its organization's keys were destroyed (offboarding). A value moved to
   * another row or tampered with throws SealOpenFailed.
   */
  async open(owner: string | null, context: string, stored: string): Promise<string> {
    if (!isSealedContact(stored)) return stored;
    if (stored.startsWith(USER_KEY_MARK, SEALED_PREFIX.length)) return this.openForUser(context, stored);
    try {
      const [plain] = await this.keys.openForOrganization(owner ?? CONSOLE_CONTACT_SCOPE, [{ sealed: stored.slice(SEALED_PREFIX.length), context: `contact:${context}` }]);
      return plain.toString('utf8');
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed) return ERASED_CONTACT;
      throw error;
    }
  }

  /** Opens what sealForUser sealed; ERASED_CONTACT once the user's key (or its owner's) was destroyed. */
  private async openForUser(context: string, stored: string): Promise<string> {
    const rest = stored.slice(SEALED_PREFIX.length + USER_KEY_MARK.length);
    const colon = rest.indexOf(':');
    const userId = rest.slice(0, colon);
    let key: Buffer | undefined;
    try {
      key = await this.userKey(null, userId, false);
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed) return ERASED_CONTACT;
      throw error;
    }
    if (key === undefined) return ERASED_CONTACT;
    try {
      return openBytes(key, Buffer.from(rest.slice(colon + 1), 'base64'), userSealAad(userId, context)).toString('utf8');
    } finally {
      key.fill(0);
    }
  }

  async openNullable(owner: string | null, context: string, stored: string | null): Promise<string | null> {
    return stored === null ? null : this.open(owner, context, stored);
  }
}
