import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import pg from 'pg';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { allEvents, streamEvents } from '../support/event-store.js';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'another horse battery';
const RESET_PASSWORD = 'a third horse battery';

/**
 * Every account and team change made in the console is an event in the log, on the console
 * user's stream, with whoever made it as the actor, and with ids and roles only: no email, name,
 * password, token or TOTP secret.
 */
describe('Console API: account and team changes are events with their actor', () => {
  let app: TestApp;
  let pool: pg.Pool;
  /** Everything secret or personal this test typed or was sent, which no event may hold. */
  const secrets = new Set<string>([PASSWORD, NEW_PASSWORD, RESET_PASSWORD]);

  beforeAll(async () => {
    app = await startTestApp({ embedded: true });
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await app?.close();
  });

  async function linkFor(to: string, subject: RegExp): Promise<string> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const mailbox = await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox');
      const mail = mailbox.body.data.find((m: { to: string; subject: string }) => m.to === to && subject.test(m.subject));
      if (mail !== undefined) {
        const token = new URL(mail.link).searchParams.get('token') as string;
        secrets.add(token);
        return token;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no mail to ${to} matching ${subject}`);
  }

  const user = (id: string) => ({ type: 'user', id });
  const operator = (id: string) => ({ type: 'operator', id: `user:${id}` });
  async function facts(userId: string): Promise<{ type: string; data: RecordedEvent['data']; actor: unknown }[]> {
    return (await streamEvents(app.eventStore, `consoleUser-${userId}`)).map((event) => ({ type: event.type, data: event.data, actor: event.metadata.actor }));
  }

  it("records an integrator's sign-up, email, passwords, sessions and team", async () => {
    const ownerEmail = uniqueEmail('events-owner');
    secrets.add(ownerEmail).add('Events organization');
    const owner = new ConsoleClient(app);
    const signedUp = await owner.signUpAndSignIn({ organizationName: 'Events organization', email: ownerEmail, password: PASSWORD });
    expect(signedUp.status).toBe(200);
    const ownerId = signedUp.body.data.user.id as string;
    const organizationId = signedUp.body.data.organization.id as string;

    expect((await owner.call('POST', '/console/api/email/verify', { token: await linkFor(ownerEmail, /Confirm your email/) })).status).toBe(200);
    expect((await owner.call('POST', '/console/api/password/change', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })).status).toBe(200);
    expect((await new ConsoleClient(app).call('POST', '/console/api/password/forgot', { email: ownerEmail })).status).toBe(202);
    const resetter = new ConsoleClient(app);
    await resetter.session();
    expect((await resetter.call('POST', '/console/api/password/reset', { token: await linkFor(ownerEmail, /Reset your password/), password: RESET_PASSWORD })).status).toBe(200);

    // Signed in again after the reset ended every session: a second session revoked from the list, then sign-out.
    const again = new ConsoleClient(app);
    await again.session();
    expect((await again.call('POST', '/console/api/login', { email: ownerEmail, password: RESET_PASSWORD })).status).toBe(200);
    const other = new ConsoleClient(app);
    await other.session();
    const otherLogin = await other.call('POST', '/console/api/login', { email: ownerEmail, password: RESET_PASSWORD });
    expect(otherLogin.status).toBe(200);
    const sessions = await again.call('GET', '/console/api/sessions');
    const otherSession = (sessions.body.data as { id: string; current: boolean }[]).find((session) => !session.current);
    expect(otherSession).toBeDefined();
    expect((await again.call('DELETE', `/console/api/sessions/${otherSession?.id}`)).status).toBe(204);
    // Revoking it again changes nothing and records nothing.
    expect((await again.call('DELETE', `/console/api/sessions/${otherSession?.id}`)).status).toBe(404);

    const memberEmail = uniqueEmail('events-member');
    const withdrawnEmail = uniqueEmail('events-withdrawn');
    secrets.add(memberEmail).add(withdrawnEmail);
    const invited = await again.call('POST', '/console/api/team/invitations', { email: memberEmail, role: 'developer' });
    expect(invited.status).toBe(201);
    const withdrawn = await again.call('POST', '/console/api/team/invitations', { email: withdrawnEmail, role: 'finance' });
    expect((await again.call('DELETE', `/console/api/team/invitations/${withdrawn.body.data.id}`)).status).toBe(204);
    const member = new ConsoleClient(app);
    await member.session();
    const accepted = await member.call('POST', '/console/api/invitations/accept', { token: await linkFor(memberEmail, /invited/), password: PASSWORD });
    expect(accepted.status).toBe(201);
    const memberId = accepted.body.data.user.id as string;
    expect((await again.call('PUT', `/console/api/team/members/${memberId}`, { role: 'finance' })).status).toBe(200);
    expect((await member.call('POST', '/console/api/logout')).status).toBe(204);
    expect((await again.call('DELETE', `/console/api/team/members/${memberId}`)).status).toBe(204);

    const ownerFacts = await facts(ownerId);
    expect(ownerFacts.map((fact) => fact.type)).toEqual([
      'ConsoleUserSignedUp',
      'ConsoleEmailVerified',
      'ConsolePasswordChanged',
      'ConsolePasswordReset',
      'ConsoleSessionRevoked',
      'ConsoleInvitationSent',
      'ConsoleInvitationSent',
      'ConsoleInvitationWithdrawn',
    ]);
    // Every one of them made by the owner, the reset too (whoever holds the mailed link acts as the account).
    expect(ownerFacts.map((fact) => fact.actor)).toEqual(ownerFacts.map(() => user(ownerId)));
    expect(ownerFacts[0].data).toEqual({ schemaVersion: 1, userId: ownerId, organizationId, role: 'owner' });
    expect(ownerFacts[4].data).toEqual({ schemaVersion: 1, userId: ownerId, sessionId: otherSession?.id, reason: 'revoked' });
    expect(ownerFacts[5].data).toEqual({ schemaVersion: 1, userId: ownerId, invitationId: invited.body.data.id, kind: 'integrator', organizationId, role: 'developer' });
    expect(ownerFacts[7].data).toMatchObject({ invitationId: withdrawn.body.data.id });

    const memberFacts = await facts(memberId);
    expect(memberFacts.map((fact) => [fact.type, fact.actor])).toEqual([
      ['ConsoleInvitationAccepted', user(memberId)],
      ['ConsoleMemberRoleChanged', user(ownerId)],
      ['ConsoleSessionRevoked', user(memberId)],
      ['ConsoleMemberRemoved', user(ownerId)],
    ]);
    expect(memberFacts[0].data).toEqual({ schemaVersion: 1, userId: memberId, invitationId: invited.body.data.id, kind: 'integrator', organizationId, role: 'developer' });
    expect(memberFacts[1].data).toEqual({ schemaVersion: 1, userId: memberId, organizationId, role: 'finance', previousRole: 'developer' });
    expect(memberFacts[2].data).toMatchObject({ reason: 'signed_out' });
    // The account is gone from the tables; its facts stay in the log.
    expect((await pool.query('select 1 from console_users where id = $1', [memberId])).rowCount).toBe(0);
  });

  it('records nothing, and keeps the invitation open, when the account cannot be made', async () => {
    const owner = new ConsoleClient(app);
    const ownerEmail = uniqueEmail('events-taken');
    secrets.add(ownerEmail);
    const signedUp = await owner.signUpAndSignIn({ organizationName: 'Events taken', email: ownerEmail, password: PASSWORD });
    const ownerId = signedUp.body.data.user.id as string;
    // An invitation to an address that has an account already.
    expect((await owner.call('POST', '/console/api/team/invitations', { email: ownerEmail, role: 'developer' })).status).toBe(201);
    const token = await linkFor(ownerEmail, /invited/);
    const taker = new ConsoleClient(app);
    await taker.session();
    const refused = await taker.call('POST', '/console/api/invitations/accept', { token, password: PASSWORD });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('email_taken');
    // The refused account's transaction also kept the link unused.
    expect((await new ConsoleClient(app).call('GET', `/console/api/invitation?token=${encodeURIComponent(token)}`)).status).toBe(200);
    const accepted = (await allEvents(app.eventStore)).filter(
      (event) => event.type === 'ConsoleInvitationAccepted' && (event.data as { organizationId: string }).organizationId === signedUp.body.data.organization.id,
    );
    expect(accepted).toEqual([]);
    expect((await facts(ownerId)).map((fact) => fact.type)).toEqual(['ConsoleUserSignedUp', 'ConsoleInvitationSent']);
  });

  it("records the operators' first account, second factor and invitations", async () => {
    const email = uniqueEmail('events-operator');
    secrets.add(email);
    const client = new ConsoleClient(app);
    await client.session();
    const created = await client.call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email, password: PASSWORD });
    expect(created.status).toBe(201);
    const operatorId = created.body.data.user.id as string;
    const setup = await client.call('POST', '/console/api/operator/totp/setup');
    secrets.add(setup.body.data.secret).add(setup.body.data.otpauthUrl);
    expect((await client.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret: setup.body.data.secret }) })).status).toBe(200);
    const invitedEmail = uniqueEmail('events-auditor');
    secrets.add(invitedEmail);
    const invited = await client.call('POST', '/console/api/operator/operators/invitations', { email: invitedEmail, role: 'auditor' });
    expect(invited.status).toBe(201);
    const auditor = new ConsoleClient(app);
    await auditor.session();
    const accepted = await auditor.call('POST', '/console/api/invitations/accept', { token: await linkFor(invitedEmail, /operators/), password: PASSWORD });
    const auditorId = accepted.body.data.user.id as string;

    expect((await facts(operatorId)).map((fact) => [fact.type, fact.actor, fact.data])).toEqual([
      ['ConsoleOperatorCreated', { type: 'operator', id: 'admin' }, { schemaVersion: 1, userId: operatorId, role: 'admin', via: 'admin_token' }],
      ['ConsoleTotpEnrolled', operator(operatorId), { schemaVersion: 1, userId: operatorId }],
      [
        'ConsoleInvitationSent',
        operator(operatorId),
        { schemaVersion: 1, userId: operatorId, invitationId: invited.body.data.id, kind: 'operator', organizationId: null, role: 'auditor' },
      ],
    ]);
    expect((await facts(auditorId)).map((fact) => [fact.type, fact.actor])).toEqual([['ConsoleInvitationAccepted', operator(auditorId)]]);
  });

  it('holds no email, name, password, hash, token or secret in any console event', async () => {
    const { rows } = await pool.query<{ password_hash: string | null; totp_secret: string | null }>('select password_hash, totp_secret from console_users');
    for (const row of rows) {
      if (row.password_hash !== null) secrets.add(row.password_hash);
      if (row.totp_secret !== null) secrets.add(row.totp_secret);
    }
    const { rows: hashes } = await pool.query<{ token_hash: string }>('select token_hash from console_tokens');
    for (const row of hashes) secrets.add(row.token_hash);
    const events = (await allEvents(app.eventStore)).filter((event) => event.streamId.startsWith('consoleUser-'));
    expect(events.length).toBeGreaterThanOrEqual(17);
    expect(secrets.size).toBeGreaterThan(15);
    const stored = events
      .map((event) => JSON.stringify({ data: event.data, metadata: event.metadata }))
      .join('\n')
      .toLowerCase();
    const found = [...secrets].filter((secret) => stored.includes(secret.toLowerCase()));
    expect(found).toEqual([]);
    expect(stored).not.toContain('@');
    expect(stored).not.toContain('argon2');
  });
});
