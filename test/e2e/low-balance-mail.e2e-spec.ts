import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { issueKey } from '../support/fixtures.js';

const PUBLIC_BASE_URL = 'https://ledger.example.test';

/** The low-balance mail as it leaves by SMTP (a real SMTP server in the test): its Top up link is the console's absolute address. */
describe('Low-balance mail by SMTP', () => {
  let app: TestApp;
  let smtp: SMTPServer;
  const received: { to: string[]; text: string }[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo.map((to) => to.address), text: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    app = await startTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Console <console@ledger.test>', PUBLIC_BASE_URL } });
  });
  afterAll(async () => {
    await app?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it("mails the owner, when a check takes the balance below the threshold, a top-up link to the console's wallet page at its public address", async () => {
    const email = uniqueEmail('owner');
    const client = new ConsoleClient(app);
    const signedUp = await client.signUpAndSignIn({ organizationName: 'Acme low balance', email, password: 'correct horse battery staple' });
    expect(signedUp.status).toBe(200);
    const organizationId = signedUp.body.data.organization.id as string;
    const wallet = await client.call('GET', '/console/api/wallet?environment=test');
    const balanceKobo = wallet.body.data.balanceKobo as number;
    expect((await client.call('PUT', '/console/api/wallet/low_balance_threshold?environment=test', { thresholdKobo: balanceKobo - 1 })).status).toBe(200);
    const { key } = await issueKey(app, organizationId, { scopes: ['nin'] });
    expect((await app.request('POST', '/v1/nin', { body: { nin: '21440414976' }, headers: { 'x-service-key': key } })).status).toBe(201);

    const lowBalance = () => received.find((mail) => mail.to.includes(email) && /Subject: Your test wallet is running low/.test(mail.text));
    for (let attempt = 0; attempt < 150 && lowBalance() === undefined; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    const text = lowBalance()?.text.replace(/=\r?\n/g, '') ?? '';
    expect(text).toContain(`Top it up to keep running checks: ${PUBLIC_BASE_URL}/console/wallet`);
    expect(text).not.toMatch(/: \/console\/wallet/);
  });
});
