import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { SoftAuthenticator } from '../support/webauthn-authenticator.js';

const PASSWORD = 'correct horse battery';
const ORIGIN = 'http://localhost:4173';
const RP_ID = 'localhost';

/** The code of the step `offset` steps from now (the server takes one step either side, each once). */
const codeAt = (secret: string, offset: number): Promise<string> => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });

/**
 * Integrators' second factor over HTTP: TOTP with backup codes, passkeys (a software
 * authenticator made to the WebAuthn spec), the sign-in step after the password, and the owner's
 * requirement of a second factor for the whole organization.
 */
describe('Console API: integrators\u2019 second factor', () => {
  let app: TestApp;
  let pool: pg.Pool;

  beforeAll(async () => {
    app = await startTestApp({ embedded: true, env: { PUBLIC_BASE_URL: ORIGIN, CONSOLE_MAIL_REQUESTS_PER_HOUR: '1000' } });
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await app?.close();
  });

  async function signedUp(label: string) {
    const client = new ConsoleClient(app);
    const email = uniqueEmail(label);
    const response = await client.signUpAndSignIn({ organizationName: `Acme ${label}`, email, password: PASSWORD });
    expect(response.status).toBe(200);
    return { client, email, userId: response.body.data.user.id as string };
  }

  async function signIn(email: string): Promise<{ client: ConsoleClient; body: Record<string, any> }> {
    const client = new ConsoleClient(app);
    await client.session();
    const response = await client.call('POST', '/console/api/login', { email, password: PASSWORD });
    expect(response.status).toBe(200);
    return { client, body: response.body.data };
  }

  async function enrolTotp(client: ConsoleClient): Promise<{ secret: string; backupCodes: string[] }> {
    const setup = await client.call('POST', '/console/api/second-factor/totp/setup');
    expect(setup.status).toBe(200);
    expect(setup.body.data.otpauthUrl).toMatch(/^otpauth:\/\/totp\//);
    const secret = setup.body.data.secret as string;
    const confirm = await client.call('POST', '/console/api/second-factor/totp/confirm', { code: await codeAt(secret, -1) });
    expect(confirm.status).toBe(200);
    return { secret, backupCodes: confirm.body.data.backupCodes as string[] };
  }

  async function linkFor(to: string, subject: RegExp): Promise<string> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const mailbox = await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox');
      const mail = mailbox.body.data.find((m: { to: string; subject: string }) => m.to === to && subject.test(m.subject));
      if (mail !== undefined) return new URL(mail.link).searchParams.get('token') as string;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no mail to ${to}`);
  }

  async function registerPasskey(client: ConsoleClient, authenticator: SoftAuthenticator, name: string): Promise<string> {
    const options = await client.call('POST', '/console/api/second-factor/passkeys/options');
    expect(options.status).toBe(200);
    expect(options.body.data.rp.id).toBe(RP_ID);
    const registered = await client.call('POST', '/console/api/second-factor/passkeys', { response: authenticator.register(options.body.data.challenge), name });
    expect(registered.status).toBe(201);
    return registered.body.data.id as string;
  }

  it('TOTP: enrolment gives ten backup codes, stored hashed; sign-in waits for a code; a time step and a backup code are each taken once; disabling needs a code', async () => {
    const { client, email, userId } = await signedUp('totp');
    const { secret, backupCodes } = await enrolTotp(client);
    expect(backupCodes).toHaveLength(10);
    expect(new Set(backupCodes).size).toBe(10);
    const stored = await pool.query<{ code_hash: string }>('select code_hash from console_backup_codes where user_id = $1', [userId]);
    expect(stored.rowCount).toBe(10);
    const storedText = JSON.stringify(stored.rows) + JSON.stringify((await pool.query('select totp_secret from console_users where id = $1', [userId])).rows);
    for (const code of [...backupCodes, secret]) expect(storedText).not.toContain(code);

    // The password alone opens nothing but the second factor's step.
    const first = await signIn(email);
    expect(first.body.user).toMatchObject({ secondFactor: true, secondFactorPending: true });
    expect(first.body.organization).toBeNull();
    for (const path of ['/console/api/overview', '/console/api/verifications', '/console/api/sessions', '/console/api/second-factor']) {
      const blocked = await first.client.call('GET', path);
      expect({ path, status: blocked.status, code: blocked.body.error.code }).toEqual({ path, status: 403, code: 'second_factor_required' });
    }
    expect((await first.client.call('POST', '/console/api/second-factor/verify', { code: '000000' === (await codeAt(secret, 0)) ? '111111' : '000000' })).body.error.code).toBe(
      'totp_invalid',
    );
    const code = await codeAt(secret, 0);
    const verified = await first.client.call('POST', '/console/api/second-factor/verify', { code });
    expect(verified.status).toBe(200);
    expect(verified.body.data.user.secondFactorPending).toBe(false);
    expect(verified.body.data.organization).not.toBeNull();
    expect((await first.client.call('GET', '/console/api/overview')).status).toBe(200);

    // The same time step a second time, on another sign-in: refused.
    const second = await signIn(email);
    const again = await second.client.call('POST', '/console/api/second-factor/verify', { code });
    expect({ status: again.status, code: again.body.error.code }).toEqual({ status: 401, code: 'totp_invalid' });
    expect((await second.client.call('GET', '/console/api/overview')).status).toBe(403);
    // A backup code works once, typed in any case and without its dashes.
    const backup = await second.client.call('POST', '/console/api/second-factor/verify', { backupCode: backupCodes[0].toUpperCase().replace(/-/g, '') });
    expect(backup.status).toBe(200);
    const third = await signIn(email);
    const reused = await third.client.call('POST', '/console/api/second-factor/verify', { backupCode: backupCodes[0] });
    expect({ status: reused.status, code: reused.body.error.code }).toEqual({ status: 401, code: 'totp_invalid' });
    expect((await third.client.call('POST', '/console/api/second-factor/verify', { backupCode: backupCodes[1] })).status).toBe(200);
    expect((await third.client.call('GET', '/console/api/second-factor')).body.data).toMatchObject({ totp: true, passkeys: 0, backupCodesLeft: 8, pending: false });

    // Disabling needs a current code; afterwards the password alone signs in.
    expect((await third.client.call('POST', '/console/api/second-factor/totp/disable', { code })).body.error.code).toBe('totp_invalid');
    expect((await third.client.call('POST', '/console/api/second-factor/totp/disable', { code: await codeAt(secret, 1) })).status).toBe(200);
    expect((await pool.query('select 1 from console_backup_codes where user_id = $1', [userId])).rowCount).toBe(0);
    expect((await signIn(email)).body.user).toMatchObject({ secondFactor: false, secondFactorPending: false });
  });

  it('the owner\u2019s requirement: a member without a second factor reaches only its set-up until they have one', async () => {
    const owner = await signedUp('owner');
    const refused = await owner.client.call('PUT', '/console/api/organization/second-factor', { required: true });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 403, code: 'second_factor_enrollment_required' });
    await enrolTotp(owner.client);
    expect((await owner.client.call('PUT', '/console/api/organization/second-factor', { required: true })).status).toBe(200);

    const memberEmail = uniqueEmail('member');
    expect((await owner.client.call('POST', '/console/api/team/invitations', { email: memberEmail, role: 'developer' })).status).toBe(201);
    const member = new ConsoleClient(app);
    await member.session();
    const accepted = await member.call('POST', '/console/api/invitations/accept', { token: await linkFor(memberEmail, /invited/), password: PASSWORD });
    expect(accepted.status).toBe(201);
    expect(accepted.body.data.user).toMatchObject({ secondFactor: false, secondFactorEnrollmentRequired: true });
    for (const [method, path] of [
      ['GET', '/console/api/overview'],
      ['GET', '/console/api/verifications'],
      ['GET', '/console/api/team'],
      ['POST', '/console/api/playground/nin'],
    ] as const) {
      const blocked = await member.call(method, path, method === 'POST' ? { nin: '31440414976' } : undefined);
      expect({ path, status: blocked.status, code: blocked.body.error.code }).toEqual({ path, status: 403, code: 'second_factor_enrollment_required' });
    }
    expect((await member.call('GET', '/console/api/second-factor')).body.data).toMatchObject({ required: true, totp: false, passkeys: 0 });
    expect((await owner.client.call('GET', '/console/api/team')).body.data.members.find((row: { email: string }) => row.email === memberEmail).secondFactor).toBe(false);

    // With a passkey the member reaches the data, and signs in with it next time.
    const authenticator = new SoftAuthenticator(ORIGIN, RP_ID);
    await registerPasskey(member, authenticator, 'Laptop');
    expect((await member.call('GET', '/console/api/verifications')).status).toBe(200);
    // The owner sees who has a second factor.
    const team = await owner.client.call('GET', '/console/api/team');
    expect(team.body.data.members.map((row: { email: string; secondFactor: boolean }) => [row.email, row.secondFactor])).toEqual([
      [owner.email, true],
      [memberEmail, true],
    ]);
    const next = await signIn(memberEmail);
    expect(next.body.user.secondFactorPending).toBe(true);
    const options = await next.client.call('POST', '/console/api/second-factor/passkey/options');
    expect((await next.client.call('POST', '/console/api/second-factor/passkey/verify', { response: authenticator.authenticate(options.body.data.challenge) })).status).toBe(200);
    expect((await next.client.call('GET', '/console/api/verifications')).status).toBe(200);

    // Turned off, a member without a factor is let through again.
    expect((await owner.client.call('PUT', '/console/api/organization/second-factor', { required: false })).status).toBe(200);
    const memberPasskeys = await member.call('GET', '/console/api/second-factor/passkeys');
    expect((await member.call('DELETE', `/console/api/second-factor/passkeys/${memberPasskeys.body.data[0].id}`)).status).toBe(204);
    expect((await member.call('GET', '/console/api/verifications')).status).toBe(200);
  });

  it('passkeys: several per account, named and removed; a challenge is taken once, and an answer for another origin or an old challenge is refused', async () => {
    const { client, email } = await signedUp('passkeys');
    const laptop = new SoftAuthenticator(ORIGIN, RP_ID);
    const phone = new SoftAuthenticator(ORIGIN, RP_ID);
    const laptopId = await registerPasskey(client, laptop, 'Laptop');
    const phoneId = await registerPasskey(client, phone, 'Phone');
    // The registration's challenge was taken: the same answer again is refused.
    const options = await client.call('POST', '/console/api/second-factor/passkeys/options');
    expect(options.body.data.excludeCredentials).toHaveLength(2);
    const answer = new SoftAuthenticator(ORIGIN, RP_ID).register(options.body.data.challenge);
    expect((await client.call('POST', '/console/api/second-factor/passkeys', { response: answer, name: 'Third' })).status).toBe(201);
    const replayedRegistration = await client.call('POST', '/console/api/second-factor/passkeys', { response: answer, name: 'Third again' });
    expect(replayedRegistration.body.error.code).toBe('passkey_challenge_invalid');
    expect((await client.call('PUT', `/console/api/second-factor/passkeys/${phoneId}`, { name: 'Work phone' })).status).toBe(204);
    const listed = await client.call('GET', '/console/api/second-factor/passkeys');
    expect(listed.body.data.map((row: { name: string }) => row.name)).toEqual(['Laptop', 'Work phone', 'Third']);
    expect((await client.call('DELETE', `/console/api/second-factor/passkeys/${listed.body.data[2].id}`)).status).toBe(204);

    const session = await signIn(email);
    expect(session.body.user).toMatchObject({ secondFactorPending: true, hasPasskey: true, totpEnabled: false });
    // No code for an account without an app; a passkey's answer for another origin is refused.
    const first = await session.client.call('POST', '/console/api/second-factor/passkey/options');
    expect(first.body.data.allowCredentials).toHaveLength(2);
    const wrongOrigin = await session.client.call('POST', '/console/api/second-factor/passkey/verify', {
      response: phone.authenticate(first.body.data.challenge, { origin: 'https://phishing.example' }),
    });
    expect({ status: wrongOrigin.status, code: wrongOrigin.body.error.code }).toEqual({ status: 401, code: 'passkey_invalid' });
    // That attempt used the challenge up: even a right answer to it is refused now.
    const afterUse = await session.client.call('POST', '/console/api/second-factor/passkey/verify', { response: phone.authenticate(first.body.data.challenge) });
    expect(afterUse.body.error.code).toBe('passkey_challenge_invalid');
    // An answer to an older challenge, sent against a newer one: refused.
    const newer = await session.client.call('POST', '/console/api/second-factor/passkey/options');
    expect((await session.client.call('POST', '/console/api/second-factor/passkey/verify', { response: phone.authenticate(first.body.data.challenge) })).body.error.code).toBe(
      'passkey_invalid',
    );
    const fresh = await session.client.call('POST', '/console/api/second-factor/passkey/options');
    expect(fresh.body.data.challenge).not.toBe(newer.body.data.challenge);
    const signedIn = await session.client.call('POST', '/console/api/second-factor/passkey/verify', { response: laptop.authenticate(fresh.body.data.challenge) });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.user.secondFactorPending).toBe(false);
    expect((await session.client.call('GET', '/console/api/overview')).status).toBe(200);
    // Replaying the answer that signed in: its challenge is gone.
    const other = await signIn(email);
    await other.client.call('POST', '/console/api/second-factor/passkey/options');
    const replay = await other.client.call('POST', '/console/api/second-factor/passkey/verify', { response: laptop.authenticate(fresh.body.data.challenge) });
    expect({ status: replay.status, code: replay.body.error.code }).toEqual({ status: 401, code: 'passkey_invalid' });
    expect((await other.client.call('GET', '/console/api/overview')).status).toBe(403);
    expect(laptopId).not.toBe(phoneId);
  });
});
