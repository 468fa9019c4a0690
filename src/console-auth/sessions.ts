import { Inject, Injectable } from '@nestjs/common';
import { parse, serialize } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { ContactData } from '../data-protection/contact-data.js';
import { PG_POOL } from '../database/pool.js';
import type { ConsoleUser, Db } from './accounts.js';
import { consoleId, secretToken, tokenHash } from './tokens.js';

export const SESSION_COOKIE = 'ivl_session';
/** The anonymous double-submit CSRF cookie, before a session exists. */
export const CSRF_COOKIE = 'ivl_csrf';
const COOKIE_PATH = '/console';
/** last_seen_at is written at most this often per session: reads of the console do not each write. */
const TOUCH_INTERVAL_MS = 15_000;
const MAX_SESSIONS_LISTED = 100;
const MAX_USER_AGENT = 300;

export interface SessionRecord {
  readonly id: string;
  readonly userId: string;
  readonly csrfToken: string;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
  /** The absolute end, CONSOLE_SESSION_MAX_HOURS after sign-in. */
  readonly expiresAt: Date;
  readonly userAgent: string | null;
  readonly address: string | null;
  /** Signed in with the password only: the second factor is still to come, and nothing else is open. */
  readonly secondFactorPending: boolean;
}

/** How long a session may wait for its second factor after the password. */
export const SECOND_FACTOR_WAIT_MS = 10 * 60_000;

interface SessionRow {
  id: string;
  user_id: string;
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  user_agent: string | null;
  address: string | null;
  second_factor_pending: boolean;
}

function record(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    csrfToken: row.csrf_token,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    userAgent: row.user_agent,
    address: row.address,
    secondFactorPending: row.second_factor_pending,
  };
}

export function requestCookies(request: FastifyRequest): Record<string, string | undefined> {
  const header = request.headers.cookie;
  return typeof header === 'string' && header.length <= 8_192 ? parse(header) : {};
}

/**
 * Console sessions in `console_sessions`: the cookie holds a random token, the table its SHA-256.
 * A session ends when unused for CONSOLE_SESSION_IDLE_MINUTES, CONSOLE_SESSION_MAX_HOURS after
 * sign-in, or when revoked (sign-out, a revocation from the sessions list, a password change).
 * The browser and the client address are stored sealed (ContactData), bound to the session.
 */
@Injectable()
export class Sessions {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {}

  private async opened(row: SessionRow): Promise<SessionRecord> {
    const [userAgent, address] = await Promise.all([
      this.contacts.openNullable(null, `console_sessions.user_agent:${row.id}`, row.user_agent),
      this.contacts.openNullable(null, `console_sessions.address:${row.id}`, row.address),
    ]);
    return record({ ...row, user_agent: userAgent, address });
  }

  /** `secondFactorPending`: the session opens nothing but the second factor's step, and ends in SECOND_FACTOR_WAIT_MS unless it is taken. */
  async create(user: ConsoleUser, request: FastifyRequest, now: Date, secondFactorPending = false): Promise<{ token: string; session: SessionRecord }> {
    const token = secretToken();
    const id = consoleId('ses');
    const given = request.headers['user-agent'];
    const userAgent = typeof given === 'string' ? given.slice(0, MAX_USER_AGENT) : null;
    const address = request.ip ?? null;
    const lifetime = secondFactorPending ? SECOND_FACTOR_WAIT_MS : this.config.console.sessionMaxMs;
    const [sealedAgent, sealedAddress] = await Promise.all([
      this.contacts.sealNullable(null, `console_sessions.user_agent:${id}`, userAgent),
      this.contacts.sealNullable(null, `console_sessions.address:${id}`, address),
    ]);
    const { rows } = await this.pool.query<SessionRow>(
      `insert into console_sessions (id, token_hash, user_id, csrf_token, created_at, last_seen_at, expires_at, user_agent, address, second_factor_pending)
       values ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9) returning *`,
      [id, tokenHash(token), user.id, secretToken(), now, new Date(now.getTime() + lifetime), sealedAgent, sealedAddress, secondFactorPending],
    );
    return { token, session: record({ ...rows[0], user_agent: userAgent, address }) };
  }

  /** The second factor was given: the session opens everything, until CONSOLE_SESSION_MAX_HOURS after now. False when it was not waiting. */
  async completeSecondFactor(sessionId: string, now: Date): Promise<SessionRecord | undefined> {
    const { rows } = await this.pool.query<SessionRow>(
      'update console_sessions set second_factor_pending = false, expires_at = $2 where id = $1 and second_factor_pending and revoked_at is null returning *',
      [sessionId, new Date(now.getTime() + this.config.console.sessionMaxMs)],
    );
    return rows[0] === undefined ? undefined : this.opened(rows[0]);
  }

  /** The live session of a cookie's token (touched), or undefined when unknown, revoked, idle too long or past its end. */
  async resolve(token: string, now: Date): Promise<SessionRecord | undefined> {
    const { rows } = await this.pool.query<SessionRow>(`select * from console_sessions where token_hash = $1 and revoked_at is null and expires_at > $2 and last_seen_at > $3`, [
      tokenHash(token),
      now,
      new Date(now.getTime() - this.config.console.sessionIdleMs),
    ]);
    const row = rows[0];
    if (row === undefined) return undefined;
    if (now.getTime() - row.last_seen_at.getTime() >= TOUCH_INTERVAL_MS) {
      await this.pool.query('update console_sessions set last_seen_at = greatest(last_seen_at, $2) where id = $1', [row.id, now]);
      row.last_seen_at = now;
    }
    // Every request resolves its session: the browser and address are opened only for the list.
    return record({ ...row, user_agent: null, address: null });
  }

  /** When the session ends if it stays unused from now. */
  endsAt(session: SessionRecord): Date {
    return new Date(Math.min(session.lastSeenAt.getTime() + this.config.console.sessionIdleMs, session.expiresAt.getTime()));
  }

  async list(userId: string, now: Date): Promise<SessionRecord[]> {
    const { rows } = await this.pool.query<SessionRow>(
      `select * from console_sessions where user_id = $1 and revoked_at is null and expires_at > $2 and last_seen_at > $3 order by created_at desc limit $4`,
      [userId, now, new Date(now.getTime() - this.config.console.sessionIdleMs), MAX_SESSIONS_LISTED],
    );
    return Promise.all(rows.map((row) => this.opened(row)));
  }

  async revoke(userId: string, sessionId: string, now: Date, db: Db = this.pool): Promise<boolean> {
    const { rowCount } = await db.query('update console_sessions set revoked_at = $3 where id = $1 and user_id = $2 and revoked_at is null', [sessionId, userId, now]);
    return (rowCount ?? 0) > 0;
  }

  /** Every session of the user but `exceptId` (a password change keeps the session that made it). */
  async revokeAll(userId: string, now: Date, exceptId: string | null = null, db: Db = this.pool): Promise<void> {
    await db.query('update console_sessions set revoked_at = $2 where user_id = $1 and revoked_at is null and ($3::text is null or id <> $3)', [userId, now, exceptId]);
  }

  /** Secure when the request came over HTTPS or CONSOLE_SECURE_COOKIES says a TLS proxy is in front. */
  private secure(request: FastifyRequest): boolean {
    return this.config.console.secureCookies || request.protocol === 'https';
  }

  setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
    const cookie = serialize(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      path: COOKIE_PATH,
      secure: this.secure(request),
      maxAge: Math.floor(this.config.console.sessionMaxMs / 1000),
    });
    appendCookie(reply, cookie);
  }

  clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
    appendCookie(reply, serialize(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: COOKIE_PATH, secure: this.secure(request), maxAge: 0 }));
  }

  setCsrfCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
    appendCookie(reply, serialize(CSRF_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: COOKIE_PATH, secure: this.secure(request) }));
  }
}

function appendCookie(reply: FastifyReply, cookie: string): void {
  const existing = reply.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)];
  void reply.header('set-cookie', [...list, cookie]);
}
