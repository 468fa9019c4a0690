import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { ConsoleClient, uniqueEmail } from '../../test/support/console-client.js';
import { allEvents } from '../../test/support/event-store.js';
import { describeOnProject } from '../../test/support/store-independent.js';
import { LegacyContactSealing } from './legacy-contacts.js';
import { hashPassword } from './passwords.js';
import { ContactData } from '../data-protection/contact-data.js';
import { userEmailContext } from './accounts.js';

/**
 * Contact data written in clear by the code before sealing: console rows, an organization's read
 * model row and its OrganizationRegistered event. The start-up pass seals every one; the account
 * still signs in and the organization still shows its email.
 */
describeOnProject('postgres', 'Sealing contact data written in clear', 'the pass rewrites OrganizationRegistered in the PostgreSQL log', () => {
  let app: TestApp;
  let pool: pg.Pool;
  const email = uniqueEmail('Legacy-Owner');
  const memberEmail = uniqueEmail('legacy-member');
  const orgEmail = `legacy-org-${Date.now()}@example.org`;
  const organizationId = 'org_01JABCDEFGHJKMNPQRSTVWXYZ0';
  const password = 'legacy console password';
  const userAgent = 'LegacyBrowser/1.0 (legacyprobe-93)';
  const address = '192.0.2.41';

  beforeAll(async () => {
    app = await startTestApp();
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
    await app.app.get(LegacyContactSealing).finished;
    // An organization registered by the old code: its email in clear in the event.
    await app.eventStore.append(
      `organization-${organizationId}`,
      [
        {
          id: randomUUID(),
          type: 'OrganizationRegistered',
          data: { organizationId, name: 'Legacy Ltd', email: orgEmail, activeScopes: ['nin'] },
          metadata: { correlationId: 'legacy', actor: { type: 'operator', id: 'legacy' } },
        },
      ],
      { expectedRevision: 'no_stream' },
    );
    for (let attempt = 0; attempt < 100; attempt++) {
      if ((await pool.query('select 1 from organizations where id = $1', [organizationId])).rows.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Its owner, a token, a mail, a session and throttle counters as the old code wrote them.
    await pool.query(
      `insert into console_users (id, kind, organization_id, email, email_key, password_hash, role, email_verified_at, created_at)
       values ('usr_LEGACY', 'integrator', $1, $2, $3, $4, 'owner', now(), now())`,
      [organizationId, email, email.toLowerCase(), await hashPassword(password)],
    );
    await pool.query(
      `insert into console_tokens (token_hash, id, purpose, user_id, kind, organization_id, email, role, created_at, expires_at)
       values ('legacy-hash', 'tok_LEGACY', 'verify_email', 'usr_LEGACY', 'integrator', $1, $2, 'owner', now(), now() + interval '1 day')`,
      [organizationId, email],
    );
    await pool.query("insert into console_outbox (recipient, subject, body, link, created_at, sent_at) values ($1, 'Hello', $2, null, now(), now())", [email, `Mail for ${email}`]);
    await pool.query(
      `insert into console_sessions (id, token_hash, user_id, csrf_token, created_at, last_seen_at, expires_at, user_agent, address)
       values ('ses_LEGACY', 'legacy-session', 'usr_LEGACY', 'csrf', now(), now(), now() + interval '1 hour', $1, $2)`,
      [userAgent, address],
    );
    await pool.query('insert into rate_limits (key, points, expire) values ($1, 1, $3), ($2, 1, $3)', [
      `console_login_account:${email.toLowerCase()}`,
      `console_login_address:${address}`,
      Date.now() + 3_600_000,
    ]);
    // A member whose email an older version sealed under the organization's key, not its own.
    await pool.query(
      `insert into console_users (id, kind, organization_id, email, email_key, password_hash, role, email_verified_at, created_at)
       values ('usr_LEGACY_SEALED', 'integrator', $1, $2, $3, $4, 'developer', now(), now())`,
      [
        organizationId,
        await app.app.get(ContactData).seal(organizationId, userEmailContext('usr_LEGACY_SEALED'), memberEmail),
        await app.app.get(ContactData).lookupKey('email', memberEmail),
        await hashPassword(password),
      ],
    );
  });

  afterAll(async () => {
    await pool?.end();
    await app?.close();
  });

  const needles = () => [email, email.toLowerCase(), orgEmail, userAgent, address];

  async function clearIn(): Promise<string[]> {
    const { rows: tables } = await pool.query<{ schema: string; name: string }>(
      `select table_schema as schema, table_name as name from information_schema.tables where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    const found: string[] = [];
    for (const table of tables) {
      const { rows } = await pool.query<{ row: string }>(`select t::text as row from "${table.schema}"."${table.name}" t`);
      for (const { row } of rows) for (const needle of needles()) if (row.includes(needle)) found.push(`${table.name}: ${needle.slice(0, 4)}`);
    }
    for (const event of await allEvents(app.eventStore))
      for (const needle of needles()) if (JSON.stringify(event.data).includes(needle)) found.push(`${event.type}: ${needle.slice(0, 4)}`);
    return [...new Set(found)].sort();
  }

  it('seals every one of them, and the account and the organization work as before', async () => {
    expect(await clearIn()).toEqual(
      [
        'OrganizationRegistered: lega',
        'console_outbox: Lega',
        'console_sessions: 192.',
        'console_sessions: Lega',
        'console_tokens: Lega',
        'console_users: Lega',
        'console_users: lega',
        'events: lega',
        'organizations: lega',
        'rate_limits: 192.',
        'rate_limits: lega',
      ].sort(),
    );
    const report = await app.app.get(LegacyContactSealing).run();
    expect(report).toEqual({ users: 2, tokens: 1, mails: 1, sessions: 1, organizations: 1, events: 1, throttleKeys: 2 });
    // Every console email is under its user's own key now, so deleting the account shreds it.
    const { rows: users } = await pool.query<{ id: string; email: string }>("select id, email from console_users where id like 'usr_LEGACY%' order by id");
    expect(users.map((user) => user.email.slice(0, 5))).toEqual(['c1:u:', 'c1:u:']);
    expect(await app.app.get(ContactData).open(organizationId, userEmailContext('usr_LEGACY_SEALED'), users[1].email)).toBe(memberEmail);
    expect(await clearIn()).toEqual([]);
    // A second run finds nothing left.
    expect(await app.app.get(LegacyContactSealing).run()).toEqual({ users: 0, tokens: 0, mails: 0, sessions: 0, organizations: 0, events: 0, throttleKeys: 0 });
    const client = new ConsoleClient(app);
    const signedIn = await client.call('POST', '/console/api/login', { email: email.toUpperCase(), password });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.user.email).toBe(email);
    const sessions = await client.call('GET', '/console/api/sessions');
    expect(sessions.body.data.map((session: { userAgent: string | null }) => session.userAgent)).toContain(userAgent);
    expect((await app.admin('GET', `/admin/v1/organizations/${organizationId}`)).body.data.email).toBe(orgEmail);
  });
});
