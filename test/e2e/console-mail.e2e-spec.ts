import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';

interface Received {
  readonly from: string;
  readonly to: string[];
  readonly text: string;
}

/** With SMTP_URL, the console's mail goes out by SMTP (here to a real SMTP server in the test), and the outbox keeps no link. */
describe('Console mail by SMTP', () => {
  let app: TestApp;
  let smtp: SMTPServer;
  let pool: pg.Pool;
  const received: Received[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((to) => to.address),
            text: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    app = await startTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Console <console@ledger.test>', CONSOLE_MAIL_REQUESTS_PER_HOUR: '3' } });
    pool = new pg.Pool({ connectionString: app.database.url, max: 1 });
  });
  afterAll(async () => {
    await pool?.end();
    await app?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it('sends the confirmation link of a sign-up, then drops the text and link from the outbox', async () => {
    const email = uniqueEmail('smtp');
    expect((await new ConsoleClient(app).signUp({ organizationName: 'Acme mail', email, password: 'correct horse battery' })).status).toBe(202);
    for (let attempt = 0; attempt < 100 && !received.some((mail) => mail.to.includes(email)); attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    const mail = received.find((candidate) => candidate.to.includes(email));
    expect(mail?.from).toBe('console@ledger.test');
    expect(mail?.text).toMatch(/Subject: Confirm your email address/);
    expect(mail?.text.replace(/=\r?\n/g, '')).toMatch(/\/console\/verify-email\?token=3D[A-Za-z0-9_-]{43}|\/console\/verify-email\?token=[A-Za-z0-9_-]{43}/);
    // The recipient is stored sealed: the sent mail is the one whose sending time follows the sign-up.
    const { rows } = await pool.query('select recipient, body, link, sent_at from console_outbox where sent_at is not null order by id desc limit 1');
    expect(rows).toEqual([{ recipient: expect.stringMatching(/^c1:/), body: null, link: null, sent_at: expect.any(Date) }]);
    expect(rows[0].recipient).not.toContain(email);
    expect((await new ConsoleClient(app).call('GET', '/console/api/dev/mailbox')).status).toBe(404);
  });

  it('with no mail transport (CONSOLE_MAIL_LOG_ONLY), logs only that a mail was queued: no link, token or address', async () => {
    const lines: string[] = [];
    const logged = await startTestApp({
      env: { LOG_LEVEL: 'info', CONSOLE_MAIL_LOG_ONLY: 'true' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    try {
      const email = uniqueEmail('logged');
      expect((await new ConsoleClient(logged).signUp({ organizationName: 'Acme logged', email, password: 'correct horse battery' })).status).toBe(202);
      const outbox = new pg.Pool({ connectionString: logged.database.url, max: 1 });
      try {
        for (let attempt = 0; attempt < 100; attempt++) {
          const { rows } = await outbox.query('select sent_at from console_outbox where recipient = $1', [email]);
          if (rows[0]?.sent_at) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        await outbox.end();
      }
      const log = lines.join('\n');
      const [local, domain] = email.split('@');
      expect(log).not.toContain('verify-email');
      expect(log).not.toMatch(/token=/);
      expect(log).not.toContain(local);
      expect(log).not.toContain(`${local[0]}***@${domain}`);
      expect(lines.filter((line) => /mail/i.test(line) && /queued/i.test(line)).length).toBeGreaterThan(0);
    } finally {
      await logged.close();
    }
  });

  it('counts sign-ups and reset requests per address: past CONSOLE_MAIL_REQUESTS_PER_HOUR, 429 with Retry-After', async () => {
    const client = new ConsoleClient(app);
    // The sign-up of the test above was the first of three.
    expect((await client.call('POST', '/console/api/password/forgot', { email: uniqueEmail('a') })).status).toBe(202);
    expect((await client.call('POST', '/console/api/password/forgot', { email: uniqueEmail('b') })).status).toBe(202);
    const refused = await client.call('POST', '/console/api/password/forgot', { email: uniqueEmail('c') });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const signUp = await new ConsoleClient(app).signUp({ organizationName: 'Acme late', email: uniqueEmail('late'), password: 'correct horse battery' });
    expect(signUp.status).toBe(429);
  });
});
