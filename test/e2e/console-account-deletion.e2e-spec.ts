import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import pg from 'pg';
import { userEmailContext } from '../../src/console-auth/accounts.js';
import { ContactData, ERASED_CONTACT } from '../../src/data-protection/contact-data.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { streamEvents } from '../support/event-store.js';

const PASSWORD = 'correct horse battery';

/**
 * A console user deletes its own account: re-authenticated, refused to the last owner, every
 * session ended, the email crypto-shredded (its sealed copy opens no more) and the fact recorded.
 */
describe('Console API: deleting one’s own account', () => {
  let app: TestApp;
  let pool: pg.Pool;

  beforeAll(async () => {
    app = await startTestApp({ embedded: true, env: { CONSOLE_MAIL_REQUESTS_PER_HOUR: '1000' } });
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await app?.close();
  });

  async function invitationToken(to: string): Promise<string> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const mailbox = await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox');
      const mail = mailbox.body.data.find((m: { to: string; subject: string }) => m.to === to && /invited/.test(m.subject));
      if (mail !== undefined) return new URL(mail.link).searchParams.get('token') as string;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no invitation mailed to ${to}`);
  }

  it('asks for the password, refuses the last owner, ends every session and shreds the email', async () => {
    const owner = new ConsoleClient(app);
    const ownerEmail = uniqueEmail('owner');
    const signedIn = await owner.signUpAndSignIn({ organizationName: 'Acme deletion', email: ownerEmail, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    const organizationId = signedIn.body.data.organization.id as string;

    const wrong = await owner.call('POST', '/console/api/account/delete', { password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_credentials');
    expect((await owner.call('POST', '/console/api/account/delete', {})).status).toBe(401);
    const last = await owner.call('POST', '/console/api/account/delete', { password: PASSWORD });
    expect(last.status).toBe(409);
    expect(last.body.error.code).toBe('last_owner');

    // A second owner, signed in on two browsers.
    const memberEmail = uniqueEmail('second-owner');
    expect((await owner.call('POST', '/console/api/team/invitations', { email: memberEmail, role: 'owner' })).status).toBe(201);
    const member = new ConsoleClient(app);
    await member.session();
    const accepted = await member.call('POST', '/console/api/invitations/accept', { token: await invitationToken(memberEmail), password: PASSWORD });
    expect(accepted.status).toBe(201);
    const memberId = accepted.body.data.user.id as string;
    const otherBrowser = new ConsoleClient(app);
    expect((await otherBrowser.call('POST', '/console/api/login', { email: memberEmail, password: PASSWORD })).status).toBe(200);

    const { rows } = await pool.query<{ email: string }>('select email from console_users where id = $1', [memberId]);
    const sealed = rows[0].email;
    expect(sealed).not.toContain(memberEmail);
    const contacts = app.app.get(ContactData);
    expect(await contacts.open(organizationId, userEmailContext(memberId), sealed)).toBe(memberEmail);

    const deleted = await member.call('POST', '/console/api/account/delete', { password: PASSWORD });
    expect(deleted.status).toBe(204);
    // Every session ended: this browser's and the other's.
    expect((await member.call('GET', '/console/api/session')).body.data.user).toBeNull();
    expect((await otherBrowser.call('GET', '/console/api/session')).body.data.user).toBeNull();
    expect((await new ConsoleClient(app).call('POST', '/console/api/login', { email: memberEmail, password: PASSWORD })).status).toBe(401);
    // Crypto-shredded: a copy of the sealed email (a backup of the row) opens no more.
    expect(await contacts.open(organizationId, userEmailContext(memberId), sealed)).toBe(ERASED_CONTACT);
    expect((await pool.query('select 1 from console_users where id = $1', [memberId])).rowCount).toBe(0);
    const keyRow = await pool.query<{ wrapped_key: string | null; destroyed_at: Date | null }>('select wrapped_key, destroyed_at from console_user_keys where user_id = $1', [
      memberId,
    ]);
    expect(keyRow.rows[0].wrapped_key).toBeNull();
    expect(keyRow.rows[0].destroyed_at).not.toBeNull();

    const events = await streamEvents(app.eventStore, `consoleUser-${memberId}`);
    const recorded = events.find((event) => event.type === 'ConsoleAccountDeleted');
    expect(recorded?.data).toEqual({ schemaVersion: 1, userId: memberId, organizationId, role: 'owner' });
    expect(JSON.stringify(events.map((event) => [event.data, event.metadata]))).not.toContain(memberEmail);

    // The first owner is the last again.
    expect((await owner.call('POST', '/console/api/account/delete', { password: PASSWORD })).body.error.code).toBe('last_owner');
    const team = await owner.call('GET', '/console/api/team');
    expect(team.body.data.members.map((m: { email: string }) => m.email)).toEqual([ownerEmail]);
  });

  it("takes a current authenticator code instead of the password, and keeps the operators' last admin", async () => {
    const operator = new ConsoleClient(app);
    await operator.session();
    expect((await operator.call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email: uniqueEmail('operator'), password: PASSWORD })).status).toBe(201);
    const { secret } = (await operator.call('POST', '/console/api/operator/totp/setup')).body.data as { secret: string };
    expect((await operator.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret }) })).status).toBe(200);

    expect((await operator.call('POST', '/console/api/account/delete', { code: '000000' })).status).toBe(401);
    // The next step's code (the confirmation used this one): accepted as re-authentication, then refused as the last admin.
    const refused = await operator.call('POST', '/console/api/account/delete', { code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }) });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('last_owner');
    expect((await operator.call('GET', '/console/api/session')).body.data.user).not.toBeNull();
  });
});
