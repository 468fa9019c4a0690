import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { generate } from 'otplib';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { ConsoleHousekeeping } from '../../src/console-auth/housekeeping.js';
import { ContactData } from '../../src/data-protection/contact-data.js';
import { streamEvents } from '../support/event-store.js';
import { SCOPES } from '../../src/scopes/scopes.js';

const PASSWORD = 'correct horse battery';

/**
 * The console's mail, roles, live access and operators' console, on the embedded default's
 * behaviour (the development mailbox exists there), over HTTP with a cookie-keeping client.
 */
describe('Console API: accounts, roles and the operators', () => {
  let app: TestApp;
  let pool: pg.Pool;

  beforeAll(async () => {
    // Every request here comes from 127.0.0.1: the per-address mail bound is raised so that only the per-account and per-recipient ones are met.
    app = await startTestApp({ embedded: true, env: { SANDBOX_CREDIT_KOBO: '500000', DEFAULT_ACTIVE_SCOPES: 'nin,bvn', CONSOLE_MAIL_REQUESTS_PER_HOUR: '1000' } });
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await app?.close();
  });

  /** The one-time link of the newest mail to `to` whose subject matches, once the outbox has it. */
  async function linkFor(to: string, subject: RegExp): Promise<string> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const mailbox = await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox');
      expect(mailbox.status).toBe(200);
      const mail = mailbox.body.data.find((m: { to: string; subject: string }) => m.to === to && subject.test(m.subject));
      if (mail !== undefined) return new URL(mail.link).searchParams.get('token') as string;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no mail to ${to} matching ${subject}`);
  }

  /** The token of the newest matching mail once it is another than `previous`. */
  async function newLinkFor(to: string, subject: RegExp, previous: string): Promise<string> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const token = await linkFor(to, subject);
      if (token !== previous) return token;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no new mail to ${to} matching ${subject}`);
  }

  /** Every recorded sign-up carried out (the pass runs each second and at every sign-up). */
  async function expectNoSignUpsLeft(): Promise<void> {
    const left = async () => Number((await pool.query<{ n: string }>('select count(*) as n from console_signups')).rows[0].n);
    for (let attempt = 0; attempt < 50 && (await left()) > 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await left()).toBe(0);
  }

  async function signedUp(label: string) {
    const client = new ConsoleClient(app);
    const email = uniqueEmail(label);
    const response = await client.signUpAndSignIn({ organizationName: `Acme ${label}`, email, password: PASSWORD });
    expect(response.status).toBe(200);
    return { client, email, organizationId: response.body.data.organization.id as string, userId: response.body.data.user.id as string };
  }

  /** The first operator, signed in once and kept: a second sign-in in the same 30 s would need a fresh code. */
  async function operator(): Promise<ConsoleClient> {
    operatorClient ??= bootstrapOperator();
    return operatorClient;
  }
  let operatorClient: Promise<ConsoleClient> | undefined;

  async function bootstrapOperator(): Promise<ConsoleClient> {
    const client = new ConsoleClient(app);
    const email = uniqueEmail('operator');
    await client.session();
    const created = await client.call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email, password: PASSWORD });
    if (created.status === 201) {
      const setup = await client.call('POST', '/console/api/operator/totp/setup');
      const confirmed = await client.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret: setup.body.data.secret }) });
      expect(confirmed.body.data.user.totpEnabled).toBe(true);
      operatorSecret = setup.body.data.secret;
      operatorEmail = email;
      return client;
    }
    throw new Error(`the first operator could not be created: ${created.status}`);
  }
  let operatorSecret = '';
  let operatorEmail = '';

  describe('email verification and password reset through the outbox', () => {
    it('answers a sign-up with a taken address as it answers a new one, and mails its holder instead', async () => {
      const mailsTo = async (to: string) =>
        (await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox')).body.data.filter((m: { to: string }) => m.to === to) as {
          subject: string;
          link: string | null;
          text: string;
        }[];
      const signUp = async (email: string, organizationName: string, password: string) => {
        const client = new ConsoleClient(app);
        await client.session();
        const response = await client.call('POST', '/console/api/signup', { organizationName, email, password });
        return { status: response.status, body: response.body, headers: [...response.headers.keys()].sort(), cookies: response.headers.getSetCookie() };
      };
      const email = uniqueEmail('taken');
      const first = await signUp(email, 'Acme first', PASSWORD);
      // Carried out after the answer: its account made before the second arrives.
      await expectNoSignUpsLeft();
      // Emails are sealed (no column holds one in clear): the second sign-up must add no account at all.
      const accounts = async () => Number((await pool.query<{ n: string }>('select count(*) as n from console_users')).rows[0].n);
      const accountsBefore = await accounts();
      const again = await signUp(email.toUpperCase(), 'Acme again', 'another good password');
      expect(first).toEqual({ status: 202, body: { status: true, data: { sent: true } }, headers: expect.arrayContaining(['content-type', 'x-request-id']), cookies: [] });
      expect(again).toEqual(first);

      let mails = await mailsTo(email);
      for (let attempt = 0; attempt < 50 && mails.length < 2; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        mails = await mailsTo(email);
      }
      // Newest first: the holder is told, and gets no second confirmation link.
      expect(mails.map((mail) => mail.subject)).toEqual(['You already have an account', 'Confirm your email address']);
      expect(mails[0].link).toMatch(/\/console\/login$/);
      expect(mails[0].text).toContain('/console/forgot-password');
      expect(mails[0].text).not.toContain('Acme again');
      // Nothing was made or changed for the second sign-up.
      await expectNoSignUpsLeft();
      expect(await accounts()).toBe(accountsBefore);
      expect((await new ConsoleClient(app).call('POST', '/console/api/login', { email, password: 'another good password' })).status).toBe(401);
      expect((await new ConsoleClient(app).call('POST', '/console/api/login', { email, password: PASSWORD })).status).toBe(200);

      // A refused sign-up is refused alike too: a blank organization name, with the taken address and with a new one.
      const blankTaken = await signUp(email, '   ', 'another good password');
      const blankNew = await signUp(uniqueEmail('blank'), '   ', 'another good password');
      expect(blankTaken.status).toBe(422);
      expect(blankTaken.body).toEqual(blankNew.body);
    });

    it('confirms the email with the mailed link, once', async () => {
      const { client, email } = await signedUp('verify');
      const token = await linkFor(email, /Confirm your email/);
      const verified = await client.call('POST', '/console/api/email/verify', { token });
      expect(verified.status).toBe(200);
      expect(verified.body.data.user.emailVerified).toBe(true);
      const reused = await client.call('POST', '/console/api/email/verify', { token });
      expect(reused.status).toBe(422);
      expect(reused.body.error.code).toBe('invalid_token');
    });

    it('resets the password with the mailed link and ends every session; an unknown address gets the same answer', async () => {
      const { client, email } = await signedUp('reset');
      const anonymous = new ConsoleClient(app);
      expect((await anonymous.call('POST', '/console/api/password/forgot', { email })).status).toBe(202);
      expect((await anonymous.call('POST', '/console/api/password/forgot', { email: uniqueEmail('nobody') })).status).toBe(202);
      const token = await linkFor(email, /Reset your password/);
      expect((await anonymous.call('POST', '/console/api/password/reset', { token, password: 'a brand new password' })).status).toBe(200);
      expect((await client.call('GET', '/console/api/keys')).status).toBe(401);
      expect((await new ConsoleClient(app).call('POST', '/console/api/login', { email, password: PASSWORD })).status).toBe(401);
      expect((await new ConsoleClient(app).call('POST', '/console/api/login', { email, password: 'a brand new password' })).status).toBe(200);
    });

    it('ends every other reset link when a newer one is mailed, one is used, or the password is changed', async () => {
      const { client, email } = await signedUp('links');
      const forgot = () => new ConsoleClient(app).call('POST', '/console/api/password/forgot', { email });
      const reset = (token: string, password: string) => new ConsoleClient(app).call('POST', '/console/api/password/reset', { token, password });
      expect((await forgot()).status).toBe(202);
      const older = await linkFor(email, /Reset your password/);
      expect((await forgot()).status).toBe(202);
      const newer = await newLinkFor(email, /Reset your password/, older);
      expect((await reset(older, 'an older link password')).body.error?.code).toBe('invalid_token');
      expect((await reset(newer, 'the newer link password')).status).toBe(200);

      const signedIn = new ConsoleClient(app);
      expect((await signedIn.call('POST', '/console/api/login', { email, password: 'the newer link password' })).status).toBe(200);
      expect((await forgot()).status).toBe(202);
      const beforeChange = await newLinkFor(email, /Reset your password/, newer);
      expect((await signedIn.call('POST', '/console/api/password/change', { currentPassword: 'the newer link password', newPassword: 'a changed password now' })).status).toBe(200);
      const late = await reset(beforeChange, 'a password from an old mail');
      expect(late.status).toBe(422);
      expect(late.body.error.code).toBe('invalid_token');
      expect((await new ConsoleClient(app).call('POST', '/console/api/login', { email, password: 'a changed password now' })).status).toBe(200);
      expect((await client.call('GET', '/console/api/keys')).status).toBe(401);
    });

    it('bounds the mails to one account and one recipient: past CONSOLE_MAILS_PER_RECIPIENT_PER_HOUR (5), 429 with Retry-After and no mail', async () => {
      const mailsTo = async (to: string, subject: RegExp) =>
        (await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox')).body.data.filter((m: { to: string; subject: string }) => m.to === to && subject.test(m.subject))
          .length;
      const { client, email } = await signedUp('resend');
      // The sign-up's mail was the first of five.
      for (let resend = 0; resend < 4; resend++) expect((await client.call('POST', '/console/api/email/resend')).status).toBe(202);
      const refused = await client.call('POST', '/console/api/email/resend');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await mailsTo(email, /Confirm your email/)).toBe(5);

      const { email: target } = await signedUp('reset-flood');
      const forgot = (to: string) => new ConsoleClient(app).call('POST', '/console/api/password/forgot', { email: to });
      for (let request = 0; request < 4; request++) expect((await forgot(target)).status).toBe(202);
      expect((await forgot(target)).status).toBe(429);
      // The reset mails are made after the answer.
      for (let attempt = 0; attempt < 50 && (await mailsTo(target, /Reset your password/)) < 4; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await mailsTo(target, /Reset your password/)).toBe(4);
      // An address with no account is bounded alike, so the answer does not tell them apart.
      const unknown = uniqueEmail('nobody-flood');
      for (let request = 0; request < 5; request++) expect((await forgot(unknown)).status).toBe(202);
      expect((await forgot(unknown)).status).toBe(429);
    });

    it('answers a reset request before looking the account up, so a known and an unknown address take the same time', async () => {
      const { email } = await signedUp('uniform');
      const locker = await pool.connect();
      const answers: Record<string, unknown> = {};
      try {
        // With the accounts', links' and mails' tables locked, any look-up or write for the account before the answer shows as a wait:
        // none, so the answer's time cannot depend on whether the address has an account. (A timing test was tried: on this loaded
        // two-core machine single answers vary by 10 to 40 ms, more than the difference the look-up used to make.)
        await locker.query('begin');
        await locker.query('lock table console_users, console_tokens, console_outbox in access exclusive mode');
        const requests = Object.entries({ known: email, unknown: uniqueEmail('uniform-nobody') }).map(([label, to]) =>
          new ConsoleClient(app)
            .call('POST', '/console/api/password/forgot', { email: to })
            .then((response) => (answers[label] = { status: response.status, body: response.body })),
        );
        for (let waited = 0; waited < 3_000 && Object.keys(answers).length < 2; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(answers).toEqual({ known: { status: 202, body: { status: true, data: { sent: true } } }, unknown: { status: 202, body: { status: true, data: { sent: true } } } });
        await locker.query('commit');
        await Promise.all(requests);
      } finally {
        await locker.query('rollback').catch(() => undefined);
        locker.release();
      }
      expect(await linkFor(email, /Reset your password/)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('answers a sign-up before any look-up or registration, so a taken and a new address take the same time, and then carries it out', async () => {
      const { email: taken } = await signedUp('signup-uniform');
      const fresh = uniqueEmail('signup-uniform-new');
      const locker = await pool.connect();
      const answers: Record<string, unknown> = {};
      let requests: Promise<unknown>[] = [];
      try {
        // As for the reset above: with the accounts', links' and mails' tables locked, a look-up of the address, or the registration
        // of a new one (its owner, link and mail), before the answer shows as a wait. None: both answer alike while locked.
        await locker.query('begin');
        await locker.query('lock table console_users, console_tokens, console_outbox in access exclusive mode');
        requests = Object.entries({ taken, fresh }).map(([label, email]) =>
          new ConsoleClient(app)
            .signUp({ organizationName: `Acme ${label}`, email, password: PASSWORD })
            .then((response) => (answers[label] = { status: response.status, body: response.body })),
        );
        for (let waited = 0; waited < 3_000 && Object.keys(answers).length < 2; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(answers).toEqual({ taken: { status: 202, body: { status: true, data: { sent: true } } }, fresh: { status: 202, body: { status: true, data: { sent: true } } } });
      } finally {
        await locker.query('rollback').catch(() => undefined);
        locker.release();
        await Promise.all(requests);
      }
      // Once the tables are free the sign-ups are carried out: the new address is confirmed and signs in, the holder of the taken one is told.
      expect(await linkFor(fresh, /Confirm your email/)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await linkFor(taken, /You already have an account/)).toBeNull();
      const signedIn = await new ConsoleClient(app).call('POST', '/console/api/login', { email: fresh, password: PASSWORD });
      expect(signedIn.status).toBe(200);
      expect(signedIn.body.data.organization.name).toBe('Acme fresh');
      await expectNoSignUpsLeft();
    });

    it('keeps the mailbox to requests from the machine itself', async () => {
      const fastify = app.app.getHttpAdapter().getInstance();
      expect((await fastify.inject({ method: 'GET', url: '/console/api/dev/mailbox', remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
      expect((await fastify.inject({ method: 'GET', url: '/console/api/dev/mailbox', remoteAddress: '10.0.0.5' })).statusCode).toBe(404);
      expect((await fastify.inject({ method: 'GET', url: '/console/api/dev/mailbox', remoteAddress: '::ffff:192.168.1.20' })).statusCode).toBe(404);
    });

    it('keeps the mailbox to the embedded default', async () => {
      const other = await startTestApp();
      try {
        expect((await new ConsoleClient(other).call('GET', '/console/api/dev/mailbox')).status).toBe(404);
      } finally {
        await other.close();
      }
    });
  });

  describe('password strength', () => {
    it('refuses guessable passwords (common, a number run, the email itself) on sign-up, reset and change, saying why', async () => {
      const email = uniqueEmail('weak');
      for (const password of ['1234567890', 'password12', email]) {
        const refused = await new ConsoleClient(app).signUp({ organizationName: 'Acme weak', email, password });
        expect(refused.status).toBe(422);
        expect(refused.body.error.code).toBe('validation_failed');
        const field = refused.body.error.details.fields.find((f: { field: string }) => f.field === 'password');
        expect(field.message).toMatch(/^password is too easy to guess/);
        expect(field.message).not.toContain(email);
      }
      const { client, email: owner } = await signedUp('strong');
      const change = await client.call('POST', '/console/api/password/change', { currentPassword: PASSWORD, newPassword: 'password12' });
      expect(change.status).toBe(422);
      expect(change.body.error.details.fields[0].field).toBe('newPassword');
      expect((await new ConsoleClient(app).call('POST', '/console/api/password/forgot', { email: owner })).status).toBe(202);
      const token = await linkFor(owner, /Reset your password/);
      const reset = await new ConsoleClient(app).call('POST', '/console/api/password/reset', { token, password: owner });
      expect(reset.status).toBe(422);
      expect(reset.body.error.details.fields[0].field).toBe('password');
      expect((await new ConsoleClient(app).call('POST', '/console/api/login', { email: owner, password: PASSWORD })).status).toBe(200);
    });
  });

  describe('sessions end', () => {
    it('after the idle time and at the absolute end (401 and the cookie cleared)', async () => {
      const idle = await signedUp('idle');
      await pool.query("update console_sessions set last_seen_at = now() - interval '31 minutes' where user_id = $1", [idle.userId]);
      const refused = await idle.client.call('GET', '/console/api/keys');
      expect(refused.status).toBe(401);
      expect(refused.headers.getSetCookie().some((line) => /^ivl_session=;/.test(line))).toBe(true);
      const old = await signedUp('absolute');
      await pool.query("update console_sessions set expires_at = now() - interval '1 second' where user_id = $1", [old.userId]);
      expect((await old.client.call('GET', '/console/api/keys')).status).toBe(401);
    });
  });

  describe('a sign-up that cannot be carried out', () => {
    it('is kept with its error code, tried again later, and counted in the metrics by that code', async () => {
      const failures = async () => {
        const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
        return [...text.matchAll(/^ivl_console_signup_failures_total\{code="([^"]+)"\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[2]), 0);
      };
      const before = await failures();
      const userId = `usr_${randomUUID()}`;
      const contacts = app.app.get(ContactData);
      // Its organization's name does not open (sealed for another field): registering it fails every time.
      await pool.query(
        `insert into console_signups (user_id, organization_id, email_key, email, organization_name, password_hash, context, created_at, next_attempt_at)
         values ($1, $2, $3, $4, $5, 'not a hash', '{}', now(), now())`,
        [
          userId,
          `org_${randomUUID()}`,
          `h1:${randomUUID()}`,
          await contacts.seal(null, 'console_signups.email', uniqueEmail('unopened')),
          await contacts.seal(null, 'console_signups.email', 'Acme unopened'),
        ],
      );
      try {
        let row: { attempts: number; last_error: string | null } | undefined;
        for (let attempt = 0; attempt < 50 && !(row !== undefined && row.attempts > 0); attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          row = (await pool.query('select attempts, last_error from console_signups where user_id = $1', [userId])).rows[0];
        }
        expect(row?.attempts).toBeGreaterThanOrEqual(1);
        expect(row?.last_error).toMatch(/^[A-Za-z_]+$/);
        expect(await failures()).toBeGreaterThanOrEqual(before + 1);
      } finally {
        await pool.query('delete from console_signups where user_id = $1', [userId]);
      }
    });
  });

  describe('housekeeping', () => {
    it('deletes sessions and one-time tokens ended over a week ago, and keeps the rest', async () => {
      const { client, userId } = await signedUp('housekeeping');
      await pool.query("update console_sessions set revoked_at = now() - interval '8 days' where user_id = $1", [userId]);
      await pool.query("update console_tokens set used_at = now() - interval '8 days' where user_id = $1", [userId]);
      const housekeeping = app.app.get(ConsoleHousekeeping);
      expect(await housekeeping.runOnce()).toBeGreaterThanOrEqual(2);
      const { rows } = await pool.query(
        'select (select count(*) from console_sessions where user_id = $1) as sessions, (select count(*) from console_tokens where user_id = $1) as tokens',
        [userId],
      );
      expect(rows[0]).toEqual({ sessions: '0', tokens: '0' });
      expect((await client.call('GET', '/console/api/session')).body.data.user).toBeNull();
      const other = await signedUp('housekeeping-kept');
      await housekeeping.runOnce();
      expect((await other.client.call('GET', '/console/api/session')).body.data.user).not.toBeNull();
    });
  });

  describe('team roles', () => {
    it('invites a developer and a finance member, each refused what their role may not do', async () => {
      const { client: owner } = await signedUp('team');
      const members: Record<string, ConsoleClient> = {};
      for (const role of ['developer', 'finance'] as const) {
        const email = uniqueEmail(role);
        const invited = await owner.call('POST', '/console/api/team/invitations', { email, role });
        expect(invited.status).toBe(201);
        const token = await linkFor(email, /invited/);
        const shown = await new ConsoleClient(app).call('GET', `/console/api/invitation?token=${encodeURIComponent(token)}`);
        expect(shown.body.data).toMatchObject({ email, role, kind: 'integrator', organizationName: 'Acme team' });
        const member = new ConsoleClient(app);
        await member.session();
        const accepted = await member.call('POST', '/console/api/invitations/accept', { token, password: PASSWORD });
        expect(accepted.status).toBe(201);
        expect(accepted.body.data.user).toMatchObject({ role, emailVerified: true });
        expect((await new ConsoleClient(app).call('GET', `/console/api/invitation?token=${encodeURIComponent(token)}`)).status).toBe(404);
        members[role] = member;
      }
      const developer = members.developer;
      const finance = members.finance;
      expect((await developer.call('GET', '/console/api/keys')).status).toBe(200);
      expect((await developer.call('POST', '/console/api/playground/nin', { input: { nin: '21440414976' } })).status).toBe(201);
      const devWallet = await developer.call('GET', '/console/api/wallet');
      expect(devWallet.status).toBe(403);
      expect(devWallet.body.error).toMatchObject({ code: 'forbidden_role', details: { requiredRoles: ['owner', 'finance'] } });
      expect((await developer.call('POST', '/console/api/team/invitations', { email: uniqueEmail('x'), role: 'owner' })).status).toBe(403);
      expect((await finance.call('GET', '/console/api/wallet')).status).toBe(200);
      expect((await finance.call('GET', '/console/api/wallet/transactions.csv')).status).toBe(200);
      expect((await finance.call('GET', '/console/api/keys')).status).toBe(403);
      expect((await finance.call('POST', '/console/api/keys', { environment: 'test' })).status).toBe(403);
      expect((await finance.call('POST', '/console/api/playground/nin', { input: { nin: '21440414976' } })).status).toBe(403);
      expect((await finance.call('GET', '/console/api/verifications')).status).toBe(403);
      const team = await owner.call('GET', '/console/api/team');
      expect(team.body.data.members.map((m: { role: string }) => m.role).sort()).toEqual(['developer', 'finance', 'owner']);
      const self = team.body.data.members.find((m: { you: boolean }) => m.you);
      const demote = await owner.call('PUT', `/console/api/team/members/${self.id}`, { role: 'developer' });
      expect(demote.status).toBe(409);
      expect(demote.body.error.code).toBe('last_owner');
    });

    it("keeps operators out of the integrators' pages and integrators out of the operators'", async () => {
      const { client } = await signedUp('kinds');
      expect((await client.call('GET', '/console/api/operator/organizations')).body.error.code).toBe('wrong_console');
      const op = await operator();
      expect((await op.call('GET', '/console/api/keys')).body.error.code).toBe('wrong_console');
    });
  });

  describe("the operators' console", () => {
    it('takes a live-access request through the approval queue to a live check, and a funding to the wallet', async () => {
      const { client, email, organizationId, userId } = await signedUp('live');
      const unverified = await client.call('POST', '/console/api/organization/live-access');
      expect(unverified.body.error.code).toBe('email_not_verified');
      await client.call('POST', '/console/api/email/verify', { token: await linkFor(email, /Confirm your email/) });
      const requested = await client.call('POST', '/console/api/organization/live-access');
      expect(requested.status).toBe(200);
      expect(requested.body.data.liveAccessRequestedAt).not.toBeNull();

      const op = await operator();
      const queue = await op.call('GET', '/console/api/operator/approval-queue');
      expect(queue.body.data.map((o: { id: string }) => o.id)).toContain(organizationId);
      const approved = await op.call('POST', `/console/api/operator/organizations/${organizationId}/approve`);
      expect(approved.body.data).toMatchObject({ approved: true, status: 'approved' });
      expect((await op.call('GET', '/console/api/operator/approval-queue')).body.data.map((o: { id: string }) => o.id)).not.toContain(organizationId);
      const funded = await op.call('POST', `/console/api/operator/organizations/${organizationId}/wallets/live/fundings`, {
        amountKobo: 250_000,
        reference: `transfer-${organizationId}`,
      });
      expect(funded.status).toBe(201);
      const events = await streamEvents(app.eventStore, `organization-${organizationId}`);
      const approval = events.find((event) => event.type === 'OrganizationApproved');
      expect((approval?.metadata.actor as { type: string }).type).toBe('operator');
      expect(events.find((event) => event.type === 'LiveAccessRequested')?.metadata.actor).toEqual({ type: 'user', id: userId });

      const wallet = await client.call('GET', '/console/api/wallet?environment=live');
      expect(wallet.body.data).toMatchObject({ environment: 'live', balanceKobo: 250_000 });
      const key = await client.call('POST', '/console/api/keys', { environment: 'live', name: 'production' });
      expect(key.status).toBe(201);
      const check = await client.call('POST', '/console/api/playground/nin', { environment: 'live', input: { nin: '21440414976' } });
      expect(check.status).toBe(201);
      expect(check.body.data).toMatchObject({ status: 'found', charged: true });

      const page = await op.call('GET', `/console/api/operator/organizations/${organizationId}`);
      expect(page.body.data.wallets.live.balanceKobo).toBe(250_000 - check.body.data.priceKobo);
      // The scopes the operator may activate: the registry's, in its order.
      expect(page.body.data.scopes).toEqual([...SCOPES]);
      const audit = await op.call('GET', `/console/api/operator/organizations/${organizationId}/wallets/live/audit`);
      expect(audit.status).toBe(200);
      expect(audit.body.meta.summary.chain.verified).toBe(true);
      const csv = await op.call('GET', `/console/api/operator/organizations/${organizationId}/wallets/live/audit.csv`);
      expect(String(csv.body).trim().split('\n')).toHaveLength(4);
      const reconcile = await op.call('GET', `/console/api/operator/organizations/${organizationId}/wallets/live/reconcile`);
      expect(reconcile.body.data.differenceCount).toBe(0);
      const projections = await op.call('GET', '/console/api/operator/projections');
      expect(projections.body.data.projections.map((p: { name: string }) => p.name)).toContain('wallets');
      expect(projections.body.data.history.length).toBeGreaterThan(0);
    });

    it('takes each authenticator code once: the same code a second time is refused', async () => {
      await operator();
      // The code of the next 30 s step: the set-up's confirmation used the current one.
      const totpCode = await generate({ secret: operatorSecret, epoch: Math.floor(Date.now() / 1000) + 30 });
      const first = await new ConsoleClient(app).call('POST', '/console/api/operator/login', { email: operatorEmail, password: PASSWORD, totpCode });
      expect(first.status).toBe(200);
      const replayed = await new ConsoleClient(app).call('POST', '/console/api/operator/login', { email: operatorEmail, password: PASSWORD, totpCode });
      expect(replayed.status).toBe(401);
      expect(replayed.body.error.code).toBe('totp_invalid');
    });

    it('asks for the second factor, and an auditor reads but changes nothing', async () => {
      const op = await operator();
      const noCode = await new ConsoleClient(app).call('POST', '/console/api/operator/login', { email: operatorEmail, password: PASSWORD });
      expect(noCode.body.error.code).toBe('totp_required');
      const wrongCode = await new ConsoleClient(app).call('POST', '/console/api/operator/login', { email: operatorEmail, password: PASSWORD, totpCode: '000000' });
      expect(wrongCode.body.error.code).toMatch(/totp_invalid|rate_limited/);
      const second = await new ConsoleClient(app).call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email: uniqueEmail('late'), password: PASSWORD });
      expect(second.body.error.code).toBe('operators_exist');

      const auditorEmail = uniqueEmail('auditor');
      expect((await op.call('POST', '/console/api/operator/operators/invitations', { email: auditorEmail, role: 'auditor' })).status).toBe(201);
      const auditor = new ConsoleClient(app);
      await auditor.session();
      const accepted = await auditor.call('POST', '/console/api/invitations/accept', { token: await linkFor(auditorEmail, /operators/), password: PASSWORD });
      expect(accepted.body.data.user).toMatchObject({ kind: 'operator', role: 'auditor', totpEnabled: false });
      expect((await auditor.call('GET', '/console/api/operator/organizations')).body.error.code).toBe('totp_enrollment_required');
      const setup = await auditor.call('POST', '/console/api/operator/totp/setup');
      await auditor.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret: setup.body.data.secret }) });
      const { organizationId } = await signedUp('audited');
      const list = await auditor.call('GET', `/console/api/operator/organizations?search=${encodeURIComponent('Acme audited')}`);
      expect(list.body.data.map((o: { id: string }) => o.id)).toContain(organizationId);
      const refused = await auditor.call('POST', `/console/api/operator/organizations/${organizationId}/suspend`, { reason: 'no' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('read_only');
      expect((await auditor.call('POST', `/console/api/operator/organizations/${organizationId}/wallets/test/fundings`, { amountKobo: 1, reference: 'x' })).body.error.code).toBe(
        'read_only',
      );
      const suspended = await op.call('POST', `/console/api/operator/organizations/${organizationId}/suspend`, { reason: 'Unpaid invoices' });
      expect(suspended.body.data).toMatchObject({ status: 'suspended', suspensionReason: 'Unpaid invoices' });
    });
  });
});
