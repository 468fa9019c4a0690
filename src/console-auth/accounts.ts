import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Conflict } from '../common/errors.js';
import { ContactData, normaliseEmail } from '../data-protection/contact-data.js';
import { PG_POOL } from '../database/pool.js';
import { consoleId, secretToken, tokenHash } from './tokens.js';

export const INTEGRATOR_ROLES = ['owner', 'developer', 'finance'] as const;
export type IntegratorRole = (typeof INTEGRATOR_ROLES)[number];
export const OPERATOR_ROLES = ['admin', 'auditor'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];
export type UserKind = 'integrator' | 'operator';
export type ConsoleRole = IntegratorRole | OperatorRole;

export interface ConsoleUser {
  readonly id: string;
  readonly kind: UserKind;
  readonly organizationId: string | null;
  readonly email: string;
  readonly role: ConsoleRole;
  readonly passwordHash: string | null;
  readonly emailVerifiedAt: Date | null;
  /** Wrapped under the master key (KeyManagement); null until the operator starts enrolling. */
  readonly totpSecret: string | null;
  readonly totpEnabledAt: Date | null;
  /** At least one passkey registered (integrators' second factor). */
  readonly hasPasskey: boolean;
  /** The user's organization requires a second factor of every member (its owner's setting). */
  readonly organizationRequiresSecondFactor: boolean;
  readonly createdAt: Date;
}

/** Has the user a second factor: TOTP or a passkey. */
export function hasSecondFactor(user: ConsoleUser): boolean {
  return (user.totpEnabledAt !== null && user.totpSecret !== null) || user.hasPasskey;
}

/** What the console's tables are written through: the pool, or the transaction of a recorded change (AccountEvents). */
export type Db = Pick<pg.PoolClient, 'query'>;

export type TokenPurpose = 'verify_email' | 'reset_password' | 'invitation';

/** A one-time token's row: never the token itself. */
export interface OneTimeToken {
  readonly id: string;
  readonly purpose: TokenPurpose;
  readonly userId: string | null;
  readonly kind: UserKind;
  readonly organizationId: string | null;
  readonly email: string;
  readonly role: ConsoleRole;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

interface UserRow {
  id: string;
  kind: UserKind;
  organization_id: string | null;
  email: string;
  role: ConsoleRole;
  password_hash: string | null;
  email_verified_at: Date | null;
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  has_passkey: boolean;
  organization_requires_second_factor: boolean;
  created_at: Date;
}

interface TokenRow {
  id: string;
  purpose: TokenPurpose;
  user_id: string | null;
  kind: UserKind;
  organization_id: string | null;
  email: string;
  role: ConsoleRole;
  created_at: Date;
  expires_at: Date;
}

function user(row: UserRow): ConsoleUser {
  return {
    id: row.id,
    kind: row.kind,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role,
    passwordHash: row.password_hash,
    emailVerifiedAt: row.email_verified_at,
    totpSecret: row.totp_secret,
    totpEnabledAt: row.totp_enabled_at,
    hasPasskey: row.has_passkey,
    organizationRequiresSecondFactor: row.organization_requires_second_factor,
    createdAt: row.created_at,
  };
}

function token(row: TokenRow): OneTimeToken {
  return {
    id: row.id,
    purpose: row.purpose,
    userId: row.user_id,
    kind: row.kind,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** A user's row with what its second factor depends on. */
const USER_COLUMNS = `u.*,
  exists (select 1 from console_passkeys p where p.user_id = u.id) as has_passkey,
  coalesce((select s.require_second_factor from console_organization_settings s where s.organization_id = u.organization_id), false) as organization_requires_second_factor`;

const UNIQUE_VIOLATION = '23505';
/** Bound on the lists the console shows (members, invitations, operators). */
const MAX_LISTED = 500;

/** What a user's and a token's email are sealed bound to (ContactData). */
export const userEmailContext = (userId: string): string => `console_users.email:${userId}`;
export const tokenEmailContext = (tokenId: string): string => `console_tokens.email:${tokenId}`;

/**
 * The console's users and one-time tokens (console_users, console_tokens). Emails are stored sealed
 * under the organization's key (the console's own for operators, ContactData) and found by their
 * keyed hash (`email_key`); rows are answered with the email opened.
 */
@Injectable()
export class AccountStore {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {}

  private async opened(row: UserRow): Promise<ConsoleUser> {
    return user({ ...row, email: await this.contacts.open(row.organization_id, userEmailContext(row.id), row.email) });
  }

  private async openedToken(row: TokenRow): Promise<OneTimeToken> {
    return token({ ...row, email: await this.contacts.open(row.organization_id, tokenEmailContext(row.id), row.email) });
  }

  async byEmail(email: string): Promise<ConsoleUser | undefined> {
    // The lower-cased address too: a row from before sealing, until the start-up pass seals it (LegacyContactSealing).
    const { rows } = await this.pool.query<UserRow>(`select ${USER_COLUMNS} from console_users u where email_key = any($1::text[])`, [
      [...(await this.contacts.lookupKeys('email', email)), normaliseEmail(email)],
    ]);
    return rows[0] === undefined ? undefined : this.opened(rows[0]);
  }

  async byId(id: string, db: Db = this.pool): Promise<ConsoleUser | undefined> {
    const { rows } = await db.query<UserRow>(`select ${USER_COLUMNS} from console_users u where id = $1`, [id]);
    return rows[0] === undefined ? undefined : this.opened(rows[0]);
  }

  /** 409 `email_taken` when the address has an account already. */
  async insert(
    input: {
      id?: string;
      kind: UserKind;
      organizationId: string | null;
      email: string;
      role: ConsoleRole;
      passwordHash: string | null;
      emailVerifiedAt: Date | null;
      createdAt: Date;
    },
    db: Db = this.pool,
  ): Promise<ConsoleUser> {
    const id = input.id ?? consoleId('usr');
    const [sealed, keys] = await Promise.all([
      this.contacts.sealForUser(input.organizationId, id, userEmailContext(id), input.email.trim()),
      this.contacts.lookupKeys('email', input.email),
    ]);
    try {
      // Stored under the current lookup key; while a rotation re-keys the rows, one under the retiring key is the same address too.
      const { rows } = await db.query<UserRow>(
        `insert into console_users (id, kind, organization_id, email, email_key, password_hash, role, email_verified_at, created_at)
         select $1, $2, $3, $4, $5, $6, $7, $8, $9 where not exists (select 1 from console_users where email_key = any($10::text[]))
         returning *, false as has_passkey,
           coalesce((select s.require_second_factor from console_organization_settings s where s.organization_id = console_users.organization_id), false) as organization_requires_second_factor`,
        [id, input.kind, input.organizationId, sealed, keys[0], input.passwordHash, input.role, input.emailVerifiedAt, input.createdAt, keys.slice(1)],
      );
      if (rows[0] === undefined) throw new EmailTaken('An account with this email exists already');
      return user({ ...rows[0], email: input.email.trim() });
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new EmailTaken('An account with this email exists already');
      throw error;
    }
  }

  async setPassword(userId: string, passwordHash: string, db: Db = this.pool): Promise<void> {
    await db.query('update console_users set password_hash = $2 where id = $1', [userId, passwordHash]);
  }

  async markEmailVerified(userId: string, at: Date, db: Db = this.pool): Promise<void> {
    await db.query('update console_users set email_verified_at = coalesce(email_verified_at, $2) where id = $1', [userId, at]);
  }

  async setRole(userId: string, role: ConsoleRole, db: Db = this.pool): Promise<void> {
    await db.query('update console_users set role = $2 where id = $1', [userId, role]);
  }

  async remove(userId: string, db: Db = this.pool): Promise<void> {
    await db.query('delete from console_users where id = $1', [userId]);
  }

  async members(organizationId: string): Promise<ConsoleUser[]> {
    const { rows } = await this.pool.query<UserRow>(`select ${USER_COLUMNS} from console_users u where organization_id = $1 order by created_at limit $2`, [
      organizationId,
      MAX_LISTED,
    ]);
    return Promise.all(rows.map((row) => this.opened(row)));
  }

  async operators(): Promise<ConsoleUser[]> {
    const { rows } = await this.pool.query<UserRow>(`select ${USER_COLUMNS} from console_users u where kind = 'operator' order by created_at limit $1`, [MAX_LISTED]);
    return Promise.all(rows.map((row) => this.opened(row)));
  }

  async operatorCount(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>("select count(*) as n from console_users where kind = 'operator'");
    return Number(rows[0].n);
  }

  /** Stores the secret with the id of the master key that wrapped it (keys rotate-master moves both). */
  async setTotpSecret(userId: string, wrappedSecret: string, masterKeyId: string): Promise<void> {
    await this.pool.query('update console_users set totp_secret = $2, totp_master_key_id = $3 where id = $1 and totp_enabled_at is null', [userId, wrappedSecret, masterKeyId]);
  }

  /** Forgets the TOTP secret (its backup codes are removed by the caller, in the same transaction). */
  async disableTotp(userId: string, db: Db = this.pool): Promise<boolean> {
    const { rowCount } = await db.query(
      'update console_users set totp_secret = null, totp_master_key_id = null, totp_enabled_at = null where id = $1 and totp_enabled_at is not null',
      [userId],
    );
    return (rowCount ?? 0) > 0;
  }

  /** False when the second factor was enabled already (two confirmations racing). */
  async enableTotp(userId: string, at: Date, db: Db = this.pool): Promise<boolean> {
    const { rowCount } = await db.query('update console_users set totp_enabled_at = $2 where id = $1 and totp_enabled_at is null', [userId, at]);
    return (rowCount ?? 0) > 0;
  }

  /**
   * Records `step` as the user's last accepted TOTP step; false when that step or a later one was
   * accepted already (the code is being used again). One statement, so two racing sign-ins with
   * the same code cannot both pass.
   */
  async acceptTotpStep(userId: string, step: number, db: Db = this.pool): Promise<boolean> {
    const { rowCount } = await db.query('update console_users set totp_last_step = $2 where id = $1 and (totp_last_step is null or totp_last_step < $2)', [userId, step]);
    return (rowCount ?? 0) > 0;
  }

  /** A new one-time token: the token itself, returned once (it goes in a link), and its row's id. */
  async createToken(
    input: { purpose: TokenPurpose; userId: string | null; kind: UserKind; organizationId: string | null; email: string; role: ConsoleRole; now: Date; ttlMs: number },
    db: Db = this.pool,
  ): Promise<{ token: string; id: string }> {
    const secret = secretToken();
    const id = consoleId('tok');
    const sealed = await this.contacts.seal(input.organizationId, tokenEmailContext(id), input.email.trim());
    await db.query(
      `insert into console_tokens (token_hash, id, purpose, user_id, kind, organization_id, email, role, created_at, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [tokenHash(secret), id, input.purpose, input.userId, input.kind, input.organizationId, sealed, input.role, input.now, new Date(input.now.getTime() + input.ttlMs)],
    );
    return { token: secret, id };
  }

  /** The token's row while it is unused and unexpired; undefined otherwise. */
  async peekToken(secret: string, purpose: TokenPurpose, now: Date): Promise<OneTimeToken | undefined> {
    const { rows } = await this.pool.query<TokenRow>('select * from console_tokens where token_hash = $1 and purpose = $2 and used_at is null and expires_at > $3', [
      tokenHash(secret),
      purpose,
      now,
    ]);
    return rows[0] === undefined ? undefined : this.openedToken(rows[0]);
  }

  /** Uses the token up: one caller only gets its row, however many race. */
  async consumeToken(secret: string, purpose: TokenPurpose, now: Date, db: Db = this.pool): Promise<OneTimeToken | undefined> {
    const { rows } = await db.query<TokenRow>('update console_tokens set used_at = $3 where token_hash = $1 and purpose = $2 and used_at is null and expires_at > $3 returning *', [
      tokenHash(secret),
      purpose,
      now,
    ]);
    return rows[0] === undefined ? undefined : this.openedToken(rows[0]);
  }

  /**
   * Ends the user's open tokens of one purpose (all but `exceptId`): a newer reset link, a used one
   * or a password change leaves no older link that still sets a password.
   */
  async endTokens(userId: string, purpose: TokenPurpose, now: Date, db: Db = this.pool, exceptId: string | null = null): Promise<void> {
    await db.query('update console_tokens set used_at = $3 where user_id = $1 and purpose = $2 and used_at is null and ($4::text is null or id <> $4)', [
      userId,
      purpose,
      now,
      exceptId,
    ]);
  }

  /** Open invitations of an organization, or of the operators (organizationId null). */
  async invitations(organizationId: string | null, now: Date): Promise<OneTimeToken[]> {
    const { rows } = await this.pool.query<TokenRow>(
      `select * from console_tokens where purpose = 'invitation' and used_at is null and expires_at > $2
         and (organization_id = $1 or ($1::text is null and organization_id is null and kind = 'operator'))
       order by created_at limit $3`,
      [organizationId, now, MAX_LISTED],
    );
    return Promise.all(rows.map((row) => this.openedToken(row)));
  }

  async withdrawInvitation(id: string, organizationId: string | null, now: Date, db: Db = this.pool): Promise<boolean> {
    const { rowCount } = await db.query(
      `update console_tokens set used_at = $3 where id = $1 and purpose = 'invitation' and used_at is null
         and (organization_id = $2 or ($2::text is null and organization_id is null))`,
      [id, organizationId, now],
    );
    return (rowCount ?? 0) > 0;
  }
}

export class EmailTaken extends Conflict {
  override readonly code = 'email_taken';
}
