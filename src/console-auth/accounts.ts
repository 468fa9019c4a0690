import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Conflict } from '../common/errors.js';
import { PG_POOL } from '../database/pool.js';
import { consoleId, emailKey, secretToken, tokenHash } from './tokens.js';

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
  readonly createdAt: Date;
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

const UNIQUE_VIOLATION = '23505';
/** Bound on the lists the console shows (members, invitations, operators). */
const MAX_LISTED = 500;

/** The console's users and one-time tokens (console_users, console_tokens). */
@Injectable()
export class AccountStore {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  async byEmail(email: string): Promise<ConsoleUser | undefined> {
    const { rows } = await this.pool.query<UserRow>('select * from console_users where email_key = $1', [emailKey(email)]);
    return rows[0] === undefined ? undefined : user(rows[0]);
  }

  async byId(id: string, db: Db = this.pool): Promise<ConsoleUser | undefined> {
    const { rows } = await db.query<UserRow>('select * from console_users where id = $1', [id]);
    return rows[0] === undefined ? undefined : user(rows[0]);
  }

  /** 409 `email_taken` when the address has an account already. */
  async insert(input: { id?: string; kind: UserKind; organizationId: string | null; email: string; role: ConsoleRole; passwordHash: string | null; emailVerifiedAt: Date | null; createdAt: Date }, db: Db = this.pool): Promise<ConsoleUser> {
    try {
      const { rows } = await db.query<UserRow>(
        `insert into console_users (id, kind, organization_id, email, email_key, password_hash, role, email_verified_at, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning *`,
        [input.id ?? consoleId('usr'), input.kind, input.organizationId, input.email.trim(), emailKey(input.email), input.passwordHash, input.role, input.emailVerifiedAt, input.createdAt],
      );
      return user(rows[0]);
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
    const { rows } = await this.pool.query<UserRow>('select * from console_users where organization_id = $1 order by created_at limit $2', [organizationId, MAX_LISTED]);
    return rows.map(user);
  }

  async operators(): Promise<ConsoleUser[]> {
    const { rows } = await this.pool.query<UserRow>("select * from console_users where kind = 'operator' order by created_at limit $1", [MAX_LISTED]);
    return rows.map(user);
  }

  async operatorCount(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>("select count(*) as n from console_users where kind = 'operator'");
    return Number(rows[0].n);
  }

  /** Stores the secret with the id of the master key that wrapped it (keys rotate-master moves both). */
  async setTotpSecret(userId: string, wrappedSecret: string, masterKeyId: string): Promise<void> {
    await this.pool.query('update console_users set totp_secret = $2, totp_master_key_id = $3 where id = $1 and totp_enabled_at is null', [userId, wrappedSecret, masterKeyId]);
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
  async createToken(input: { purpose: TokenPurpose; userId: string | null; kind: UserKind; organizationId: string | null; email: string; role: ConsoleRole; now: Date; ttlMs: number }, db: Db = this.pool): Promise<{ token: string; id: string }> {
    const secret = secretToken();
    const id = consoleId('tok');
    await db.query(
      `insert into console_tokens (token_hash, id, purpose, user_id, kind, organization_id, email, role, created_at, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [tokenHash(secret), id, input.purpose, input.userId, input.kind, input.organizationId, input.email.trim(), input.role, input.now, new Date(input.now.getTime() + input.ttlMs)],
    );
    return { token: secret, id };
  }

  /** The token's row while it is unused and unexpired; undefined otherwise. */
  async peekToken(secret: string, purpose: TokenPurpose, now: Date): Promise<OneTimeToken | undefined> {
    const { rows } = await this.pool.query<TokenRow>('select * from console_tokens where token_hash = $1 and purpose = $2 and used_at is null and expires_at > $3', [tokenHash(secret), purpose, now]);
    return rows[0] === undefined ? undefined : token(rows[0]);
  }

  /** Uses the token up: one caller only gets its row, however many race. */
  async consumeToken(secret: string, purpose: TokenPurpose, now: Date, db: Db = this.pool): Promise<OneTimeToken | undefined> {
    const { rows } = await db.query<TokenRow>(
      'update console_tokens set used_at = $3 where token_hash = $1 and purpose = $2 and used_at is null and expires_at > $3 returning *',
      [tokenHash(secret), purpose, now],
    );
    return rows[0] === undefined ? undefined : token(rows[0]);
  }

  /**
   * Ends the user's open tokens of one purpose (all but `exceptId`): a newer reset link, a used one
   * or a password change leaves no older link that still sets a password.
   */
  async endTokens(userId: string, purpose: TokenPurpose, now: Date, db: Db = this.pool, exceptId: string | null = null): Promise<void> {
    await db.query('update console_tokens set used_at = $3 where user_id = $1 and purpose = $2 and used_at is null and ($4::text is null or id <> $4)', [userId, purpose, now, exceptId]);
  }

  /** Open invitations of an organization, or of the operators (organizationId null). */
  async invitations(organizationId: string | null, now: Date): Promise<OneTimeToken[]> {
    const { rows } = await this.pool.query<TokenRow>(
      `select * from console_tokens where purpose = 'invitation' and used_at is null and expires_at > $2
         and (organization_id = $1 or ($1::text is null and organization_id is null and kind = 'operator'))
       order by created_at limit $3`,
      [organizationId, now, MAX_LISTED],
    );
    return rows.map(token);
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
