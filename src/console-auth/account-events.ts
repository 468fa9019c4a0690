import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import type { Actor, CommandContext, Event } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { PG_POOL } from '../database/pool.js';
import { identityCodec } from '../event-sourcing/codec.js';
import { EVENT_STORE, type EventStore, type EventToAppend } from '../event-store/event-store.port.js';
import type { ConsoleRole, Db, UserKind } from './accounts.js';

/**
 * The console's account and team changes as facts in the event log, one stream per console user
 * (`consoleUser-{userId}`). Ids, kinds and roles only: never an email, a name, a password hash, a
 * token or a TOTP secret (those stay in the console's tables, which can forget them).
 */
export type ConsoleAccountEvent =
  | Event<'ConsoleUserSignedUp', { schemaVersion: 1; userId: string; organizationId: string; role: ConsoleRole }>
  | Event<'ConsoleEmailVerified', { schemaVersion: 1; userId: string }>
  /** A first password, set through the link of an account created without one (`operator create`). */
  | Event<'ConsolePasswordSet', { schemaVersion: 1; userId: string }>
  | Event<'ConsolePasswordReset', { schemaVersion: 1; userId: string }>
  | Event<'ConsolePasswordChanged', { schemaVersion: 1; userId: string; keptSessionId: string }>
  | Event<'ConsoleInvitationSent', { schemaVersion: 1; userId: string; invitationId: string; kind: UserKind; organizationId: string | null; role: ConsoleRole }>
  | Event<'ConsoleInvitationWithdrawn', { schemaVersion: 1; userId: string; invitationId: string; organizationId: string | null }>
  | Event<'ConsoleInvitationAccepted', { schemaVersion: 1; userId: string; invitationId: string; kind: UserKind; organizationId: string | null; role: ConsoleRole }>
  | Event<'ConsoleMemberRoleChanged', { schemaVersion: 1; userId: string; organizationId: string; role: ConsoleRole; previousRole: ConsoleRole }>
  | Event<'ConsoleMemberRemoved', { schemaVersion: 1; userId: string; organizationId: string; role: ConsoleRole }>
  /** The user deleted its own account: its row gone, its own key (and so its sealed email) destroyed. */
  | Event<'ConsoleAccountDeleted', { schemaVersion: 1; userId: string; organizationId: string | null; role: ConsoleRole }>
  | Event<'ConsoleSessionRevoked', { schemaVersion: 1; userId: string; sessionId: string; reason: 'signed_out' | 'revoked' }>
  | Event<'ConsoleOperatorCreated', { schemaVersion: 1; userId: string; role: ConsoleRole; via: 'admin_token' | 'cli' }>
  | Event<'ConsoleTotpEnrolled', { schemaVersion: 1; userId: string }>
  | Event<'ConsoleTotpDisabled', { schemaVersion: 1; userId: string }>
  | Event<'ConsoleBackupCodesIssued', { schemaVersion: 1; userId: string; count: number }>
  | Event<'ConsoleBackupCodeUsed', { schemaVersion: 1; userId: string; sessionId: string }>
  | Event<'ConsolePasskeyRegistered', { schemaVersion: 1; userId: string; passkeyId: string }>
  | Event<'ConsolePasskeyRemoved', { schemaVersion: 1; userId: string; passkeyId: string }>
  | Event<'ConsoleSecondFactorRequirementChanged', { schemaVersion: 1; userId: string; organizationId: string; required: boolean }>;

export const CONSOLE_ACCOUNT_EVENT_TYPES: readonly ConsoleAccountEvent['type'][] = [
  'ConsoleUserSignedUp',
  'ConsoleEmailVerified',
  'ConsolePasswordSet',
  'ConsolePasswordReset',
  'ConsolePasswordChanged',
  'ConsoleInvitationSent',
  'ConsoleInvitationWithdrawn',
  'ConsoleInvitationAccepted',
  'ConsoleMemberRoleChanged',
  'ConsoleMemberRemoved',
  'ConsoleAccountDeleted',
  'ConsoleSessionRevoked',
  'ConsoleOperatorCreated',
  'ConsoleTotpEnrolled',
  'ConsoleTotpDisabled',
  'ConsoleBackupCodesIssued',
  'ConsoleBackupCodeUsed',
  'ConsolePasskeyRegistered',
  'ConsolePasskeyRemoved',
  'ConsoleSecondFactorRequirementChanged',
];

/** The answer of a change and the facts it made (none when it changed nothing, e.g. an already revoked session). */
export interface Recorded<T> {
  readonly value: T;
  readonly events: readonly ConsoleAccountEvent[];
}

/** The actor of a console account's own change, from its id and kind. */
export function accountActor(kind: UserKind, userId: string): Actor {
  return kind === 'operator' ? { type: 'operator', id: `user:${userId}` } : { type: 'user', id: userId };
}

const codec = identityCodec<ConsoleAccountEvent>();

/**
 * Writes a change of the console's tables and its events so that neither is kept without the
 * other: the rows are written in a PostgreSQL transaction, the events appended (to the event store
 * of either kind) while it is open, and the transaction committed only after the append succeeded.
 * A refused or failed append rolls the rows back; a change refused by the rows (an email taken, a
 * used link) appends nothing.
 */
@Injectable()
export class AccountEvents {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
    @Inject(Clock) private readonly clock: Clock,
  ) {}

  async record<T>(context: CommandContext, change: (db: Db) => Promise<Recorded<T>>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('begin');
      const { value, events } = await change(client);
      await this.append(events, context);
      await client.query('commit');
      return value;
    } catch (error) {
      // A connection that cannot even roll back is not given back to the pool.
      await client.query('rollback').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Each user's events in one append to its stream, in the order given. */
  private async append(events: readonly ConsoleAccountEvent[], context: CommandContext): Promise<void> {
    const byStream = new Map<string, EventToAppend[]>();
    const now = this.clock.now();
    for (const event of events) {
      const streamId = streams.consoleUser(event.data.userId);
      const encoded = await codec.encode(event, { id: this.ids.eventId(), streamId, revision: -1n, context, occurredAt: now });
      byStream.set(streamId, [...(byStream.get(streamId) ?? []), encoded]);
    }
    for (const [streamId, encoded] of byStream) await this.store.append(streamId, encoded, { expectedRevision: 'any' });
  }
}
