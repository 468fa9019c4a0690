import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ContactKeyRotation } from '../../src/console-auth/contact-key-rotation.js';
import { CONSOLE_CONTACT_SCOPE, ContactData } from '../../src/data-protection/contact-data.js';
import { DataKeys } from '../../src/data-protection/data-keys.js';
import type { RetokeniseProgress } from '../../src/data-protection/rotation-pass.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { testEventStoreEnv } from '../support/event-store.js';
import { DIST, runNode } from '../support/processes.js';

const PASSWORD = 'correct horse battery';

/** The pass was stopped part-way (as a kill between two batches would). */
class Stopped extends Error {}

/**
 * A rotation of the console's email lookup key (`keys rotate-index console:contacts`): sign-in,
 * sign-up (a taken address refused), password reset and invitations work before the pass, with it
 * stopped half-way, and after it retired the old key through the admin CLI.
 */
describe("Rotation of the console's contact lookup key", () => {
  let app: TestApp;
  /** Another instance on the same database, whose cache holds the lookup key from before the rotation. */
  let other: TestApp;
  let pool: pg.Pool;

  beforeAll(async () => {
    app = await startTestApp({ embedded: true, env: { CONSOLE_MAIL_REQUESTS_PER_HOUR: '1000', CONSOLE_MAILS_PER_RECIPIENT_PER_HOUR: '100' } });
    other = await startTestApp({ database: app.database, embedded: true, env: { CONSOLE_MAIL_REQUESTS_PER_HOUR: '1000', CONSOLE_MAILS_PER_RECIPIENT_PER_HOUR: '100' } });
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await other?.close();
    await app?.close();
  });

  /** The one-time link token of the newest mail to `to` whose subject matches, if there is one now. */
  async function newestLink(to: string, subject: RegExp): Promise<string | undefined> {
    const mailbox = await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox');
    const mail = mailbox.body.data.find((m: { to: string; subject: string }) => m.to === to && subject.test(m.subject));
    return mail === undefined ? undefined : (new URL(mail.link).searchParams.get('token') ?? undefined);
  }

  /** The one-time link token of the newest mail to `to` whose subject matches and that is not `previous`, once the outbox has it. */
  async function linkFor(to: string, subject: RegExp, previous?: string): Promise<string> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const token = await newestLink(to, subject);
      if (token !== undefined && token !== previous) return token;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no mail to ${to} matching ${subject}`);
  }

  async function mailSubjects(to: string, count: number): Promise<string[]> {
    for (let attempt = 0; ; attempt++) {
      const mailbox = await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox');
      const subjects = mailbox.body.data.filter((m: { to: string }) => m.to === to).map((m: { subject: string }) => m.subject);
      if (subjects.length >= count || attempt > 100) return subjects;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const accounts = async () => Number((await pool.query<{ n: string }>('select count(*) as n from console_users')).rows[0].n);
  const signIn = async (email: string, password = PASSWORD, on = app) => (await new ConsoleClient(on).call('POST', '/console/api/login', { email, password })).status;

  async function signUp(label: string) {
    const client = new ConsoleClient(app);
    const email = uniqueEmail(label);
    const response = await client.signUpAndSignIn({ organizationName: `Acme ${label}`, email, password: PASSWORD });
    expect(response.status).toBe(200);
    return { client, email };
  }

  /** Everything the lookup key serves, for one account: sign-in, a refused second sign-up, a password reset, an invitation. */
  async function exercise(owner: { client: ConsoleClient; email: string }, password: string, newPassword: string) {
    expect(await signIn(owner.email, password)).toBe(200);
    const before = await accounts();
    const again = await new ConsoleClient(app).signUp({ organizationName: 'Acme again', email: owner.email.toUpperCase(), password: 'another good password' });
    expect(again.status).toBe(202);
    expect(await accounts()).toBe(before);
    expect(await signIn(owner.email, 'another good password')).toBe(401);

    const previous = await newestLink(owner.email, /Reset your password/);
    expect((await new ConsoleClient(app).call('POST', '/console/api/password/forgot', { email: owner.email })).status).toBe(202);
    const token = await linkFor(owner.email, /Reset your password/, previous);
    expect((await new ConsoleClient(app).call('POST', '/console/api/password/reset', { token, password: newPassword })).status).toBe(200);
    expect(await signIn(owner.email, newPassword)).toBe(200);

    const signedIn = new ConsoleClient(app);
    expect((await signedIn.call('POST', '/console/api/login', { email: owner.email, password: newPassword })).status).toBe(200);
    const memberEmail = uniqueEmail('member');
    expect((await signedIn.call('POST', '/console/api/team/invitations', { email: memberEmail, role: 'developer' })).status).toBe(201);
    const invitation = await linkFor(memberEmail, /invited/);
    const member = new ConsoleClient(app);
    await member.session();
    expect((await member.call('POST', '/console/api/invitations/accept', { token: invitation, password: PASSWORD })).status).toBe(201);
    expect(await signIn(memberEmail)).toBe(200);
    return memberEmail;
  }

  it('keeps sign-in, sign-up, resets and invitations working before, during and after the re-keying, and retires the old key', async () => {
    const first = await signUp('first');
    const second = await signUp('second');
    const third = await signUp('third');
    const keyOf = async (email: string) =>
      (
        await pool.query<{ email_key: string }>('select email_key from console_users where email_key = any($1::text[])', [
          await app.app.get(ContactData).lookupKeys('email', email),
        ])
      ).rows[0]?.email_key;
    expect(await keyOf(first.email)).toMatch(/^h1:(?!v\d+:)/);
    expect(await signIn(first.email, PASSWORD, other)).toBe(200);

    const keys = app.app.get(DataKeys);
    expect(await keys.rotateIndexKey(CONSOLE_CONTACT_SCOPE, new Date())).toEqual({ version: 2, started: true });
    // Rotated, nothing re-keyed yet: the accounts are found under the old key, new ones are written under the new.
    const member = await exercise(first, PASSWORD, 'first new password');
    expect(await keyOf(first.email)).toMatch(/^h1:(?!v\d+:)/);
    expect(await keyOf(member)).toMatch(/^h1:v2:/);
    const later = await signUp('later');
    expect(await keyOf(later.email)).toMatch(/^h1:v2:/);
    // The other instance sees the rotation at once: it finds accounts under either key, and refuses a taken address written under the new one.
    expect(await signIn(member, PASSWORD, other)).toBe(200);
    expect(await signIn(second.email, PASSWORD, other)).toBe(200);
    const accountsBefore = await accounts();
    expect((await new ConsoleClient(other).signUp({ organizationName: 'Acme copy', email: later.email, password: 'another good password' })).status).toBe(202);
    expect(await accounts()).toBe(accountsBefore);

    // The pass stopped after its first batch: some accounts under each key.
    const seen: RetokeniseProgress[] = [];
    await expect(
      new ContactKeyRotation(pool, keys, app.app.get(ContactData), { settleMs: 60_000 }).run({
        batchSize: 1,
        onProgress: (progress) => {
          seen.push(progress);
          if (progress.done >= 1) throw new Stopped();
        },
      }),
    ).rejects.toBeInstanceOf(Stopped);
    expect(seen[0]).toEqual({ done: 0, total: 3 });
    const stale = async () => Number((await pool.query<{ n: string }>("select count(*) as n from console_users where email_key not like 'h1:v2:%'")).rows[0].n);
    expect(await stale()).toBe(2);
    await exercise(second, PASSWORD, 'second new password');
    await exercise(third, PASSWORD, 'third new password');

    // The CLI ends it (as if every instance's cache had expired since the rotation).
    await pool.query("update organization_keys set index_rotated_at = now() - interval '5 minutes' where organization_id = $1", [CONSOLE_CONTACT_SCOPE]);
    const env = {
      PATH: process.env.PATH,
      ...(await testEventStoreEnv(app.database)),
      DATABASE_URL: app.database.url,
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: await mkdtemp(join(tmpdir(), 'ledger-rotate-contacts-')),
    };
    const ended = await runNode(DIST.admin, ['--json', 'keys', 'rotate-index', CONSOLE_CONTACT_SCOPE], { env, timeoutMs: 120_000 });
    expect(ended.code).toBe(0);
    expect(JSON.parse(ended.stdout)).toMatchObject({ organizationId: CONSOLE_CONTACT_SCOPE, started: false, version: 2, retired: true, interrupted: false });
    expect(ended.stderr).toMatch(/rotate-index: \d+\/\d+ console accounts re-tokenised under version 2/);
    expect(await stale()).toBe(0);
    const row = await pool.query('select index_version, retiring_index_key from organization_keys where organization_id = $1', [CONSOLE_CONTACT_SCOPE]);
    expect(row.rows[0]).toEqual({ index_version: 2, retiring_index_key: null });

    // After: every flow again, on accounts re-keyed by both passes and made under the new key.
    await exercise(first, 'first new password', 'first newer password');
    await exercise(third, 'third new password', 'third newer password');
    await exercise(later, PASSWORD, 'later new password');
    expect(await signIn(member)).toBe(200);
    expect(await signIn(first.email, 'first newer password', other)).toBe(200);
    expect(await mailSubjects(second.email, 2)).toContain('You already have an account');
  });

  it('re-keys a sign-up not yet carried out, so that its address is still found once the old key is retired', async () => {
    const contacts = app.app.get(ContactData);
    const keys = app.app.get(DataKeys);
    const email = uniqueEmail('pending');
    const userId = `usr_${randomUUID()}`;
    // Answered, not carried out (its next attempt a day off), keyed under the key about to retire.
    await pool.query(
      `insert into console_signups (user_id, organization_id, email_key, email, organization_name, password_hash, context, created_at, next_attempt_at)
       values ($1, $2, $3, $4, $5, 'not a hash', '{}', now(), now() + interval '1 day')`,
      [
        userId,
        `org_${randomUUID()}`,
        await contacts.lookupKey('email', email),
        await contacts.seal(null, 'console_signups.email', email),
        await contacts.seal(null, 'console_signups.organization_name', 'Acme pending'),
      ],
    );
    const { version } = await keys.rotateIndexKey(CONSOLE_CONTACT_SCOPE, new Date());
    await pool.query("update organization_keys set index_rotated_at = now() - interval '5 minutes' where organization_id = $1", [CONSOLE_CONTACT_SCOPE]);
    const seen: RetokeniseProgress[] = [];
    const ended = await new ContactKeyRotation(pool, keys, contacts, { settleMs: 60_000 }).run({ onProgress: (progress) => seen.push(progress) });
    expect(ended).toMatchObject({ version, retired: true, interrupted: false });
    expect(seen[0]!.total).toBeGreaterThanOrEqual(1);
    const row = await pool.query<{ email_key: string }>('select email_key from console_signups where user_id = $1', [userId]);
    expect(await contacts.lookupKeys('email', email)).toEqual([row.rows[0]?.email_key]);
    await pool.query('delete from console_signups where user_id = $1', [userId]);
  });
});
