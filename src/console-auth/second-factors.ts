import { Inject, Injectable } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import type pg from 'pg';
import { PG_POOL } from '../database/pool.js';
import type { Db } from './accounts.js';
import { tokenHash } from './tokens.js';
import { ulid } from 'ulid';

/** How many backup codes a user gets at a time; each works once. */
export const BACKUP_CODE_COUNT = 10;
/** 16 characters of a 32-letter alphabet: 80 random bits, so a SHA-256 of it is as safe as a bcrypt of a password. */
const BACKUP_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BACKUP_LENGTH = 16;
/** A WebAuthn challenge lives this long, and is taken once. */
export const CHALLENGE_TTL_MS = 2 * 60_000;
const MAX_PASSKEYS = 20;

export type ChallengePurpose = 'register' | 'authenticate';

export interface Passkey {
  readonly id: string;
  readonly userId: string;
  readonly credentialId: string;
  readonly publicKey: Uint8Array;
  readonly counter: number;
  readonly transports: string[];
  readonly name: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Buffer;
  counter: string;
  transports: string[];
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

function passkey(row: PasskeyRow): Passkey {
  return {
    id: row.id,
    userId: row.user_id,
    credentialId: row.credential_id,
    publicKey: new Uint8Array(row.public_key),
    counter: Number(row.counter),
    transports: row.transports,
    name: row.name,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** A backup code as typed: case, spaces and dashes do not matter. */
export function normaliseBackupCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

const backupHash = (userId: string, code: string): string => tokenHash(`console-backup:${userId}:${normaliseBackupCode(code)}`);

/**
 * Integrators' second factors besides the TOTP secret (which stays on console_users): backup
 * codes (hashes only), passkeys, WebAuthn challenges, and organizations' requirement of a second factor.
 */
@Injectable()
export class SecondFactorStore {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  /** Ten new codes, replacing any before: the codes themselves are returned once and never stored. */
  async replaceBackupCodes(userId: string, now: Date, db: Db = this.pool): Promise<string[]> {
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, () => {
      const raw = Array.from({ length: BACKUP_LENGTH }, () => BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)]).join('');
      return raw.match(/.{4}/g)!.join('-');
    });
    await db.query('delete from console_backup_codes where user_id = $1', [userId]);
    await db.query('insert into console_backup_codes (code_hash, user_id, created_at) select unnest($2::text[]), $1, $3', [
      userId,
      codes.map((code) => backupHash(userId, code)),
      now,
    ]);
    return codes;
  }

  /** Uses a backup code up: true once per code, however many race. */
  async useBackupCode(userId: string, code: string, now: Date, db: Db = this.pool): Promise<boolean> {
    const { rowCount } = await db.query('update console_backup_codes set used_at = $3 where code_hash = $1 and user_id = $2 and used_at is null', [
      backupHash(userId, code),
      userId,
      now,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async backupCodesLeft(userId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('select count(*) as n from console_backup_codes where user_id = $1 and used_at is null', [userId]);
    return Number(rows[0].n);
  }

  async removeBackupCodes(userId: string, db: Db = this.pool): Promise<void> {
    await db.query('delete from console_backup_codes where user_id = $1', [userId]);
  }

  async passkeys(userId: string): Promise<Passkey[]> {
    const { rows } = await this.pool.query<PasskeyRow>('select * from console_passkeys where user_id = $1 order by created_at limit $2', [userId, MAX_PASSKEYS]);
    return rows.map(passkey);
  }

  async passkeyCount(userId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('select count(*) as n from console_passkeys where user_id = $1', [userId]);
    return Number(rows[0].n);
  }

  async passkeyByCredential(userId: string, credentialId: string): Promise<Passkey | undefined> {
    const { rows } = await this.pool.query<PasskeyRow>('select * from console_passkeys where user_id = $1 and credential_id = $2', [userId, credentialId]);
    return rows[0] === undefined ? undefined : passkey(rows[0]);
  }

  /** False when the credential is registered already (to anyone). */
  async addPasskey(
    input: { userId: string; credentialId: string; publicKey: Uint8Array; counter: number; transports: string[]; name: string; now: Date },
    db: Db = this.pool,
  ): Promise<string | undefined> {
    const id = `pk_${ulid()}`;
    const { rowCount } = await db.query(
      `insert into console_passkeys (id, user_id, credential_id, public_key, counter, transports, name, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (credential_id) do nothing`,
      [id, input.userId, input.credentialId, Buffer.from(input.publicKey), input.counter, input.transports, input.name, input.now],
    );
    return (rowCount ?? 0) > 0 ? id : undefined;
  }

  async passkeyUsed(id: string, counter: number, now: Date): Promise<void> {
    await this.pool.query('update console_passkeys set counter = greatest(counter, $2), last_used_at = $3 where id = $1', [id, counter, now]);
  }

  async renamePasskey(userId: string, id: string, name: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('update console_passkeys set name = $3 where id = $1 and user_id = $2', [id, userId, name]);
    return (rowCount ?? 0) > 0;
  }

  async removePasskey(userId: string, id: string, db: Db = this.pool): Promise<boolean> {
    const { rowCount } = await db.query('delete from console_passkeys where id = $1 and user_id = $2', [id, userId]);
    return (rowCount ?? 0) > 0;
  }

  /** The session's one live challenge of this purpose: a newer one replaces it. */
  async putChallenge(sessionId: string, purpose: ChallengePurpose, challenge: string, now: Date): Promise<void> {
    await this.pool.query(
      `insert into console_webauthn_challenges (session_id, purpose, challenge, expires_at) values ($1, $2, $3, $4)
       on conflict (session_id, purpose) do update set challenge = excluded.challenge, expires_at = excluded.expires_at`,
      [sessionId, purpose, challenge, new Date(now.getTime() + CHALLENGE_TTL_MS)],
    );
  }

  /** Takes the session's challenge away (whatever the answer's fate): undefined when none, or expired. */
  async takeChallenge(sessionId: string, purpose: ChallengePurpose, now: Date): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ challenge: string; expires_at: Date }>(
      'delete from console_webauthn_challenges where session_id = $1 and purpose = $2 returning challenge, expires_at',
      [sessionId, purpose],
    );
    const row = rows[0];
    return row === undefined || row.expires_at.getTime() <= now.getTime() ? undefined : row.challenge;
  }

  async setOrganizationRequirement(organizationId: string, required: boolean, now: Date, db: Db = this.pool): Promise<void> {
    await db.query(
      `insert into console_organization_settings (organization_id, require_second_factor, updated_at) values ($1, $2, $3)
       on conflict (organization_id) do update set require_second_factor = excluded.require_second_factor, updated_at = excluded.updated_at`,
      [organizationId, required, now],
    );
  }
}
