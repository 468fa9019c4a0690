import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import { checkPage, consoleApi, expect, invite, signUp, test } from './fixtures.js';

interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** At a phone's width the page itself never scrolls sideways: wide tables scroll inside their own region. */
async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const original = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await expect.poll(() => page.evaluate<number>('document.documentElement.scrollWidth'), { message: 'the page width at 390 px' }).toBe(390);
  if (original !== null) await page.setViewportSize(original);
}

/** A receiver on this machine (the embedded default allows private targets): it keeps what it is sent and answers 200. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': 'text/plain' }).end('received, thanks');
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/ledger`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}

test('webhooks: a developer adds an endpoint, runs a sandbox check, and sees its signed delivery and attempt; finance cannot add one but sets the low-balance alert', async ({
  page,
  browser,
}) => {
  const receiver = await startReceiver();
  try {
    await signUp(page);
    const developer = await invite(page, browser, 'developer');
    const finance = await invite(page, browser, 'finance');

    await developer.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Webhooks' }).click();
    await expect(developer.getByRole('heading', { name: 'Webhooks (test)', level: 1 })).toBeVisible();
    await expect(developer.getByText('No test webhook endpoints yet.')).toBeVisible();
    await developer.getByRole('textbox', { name: 'URL' }).fill(receiver.url);
    await developer.getByRole('combobox', { name: 'Event types' }).click();
    await developer.getByRole('option', { name: 'verification.completed', exact: true }).click();
    await developer.keyboard.press('Escape');
    await developer.getByRole('textbox', { name: 'Description' }).fill('browser test receiver');
    await developer.getByRole('button', { name: 'Add endpoint' }).click();

    const dialog = developer.getByRole('dialog', { name: 'Signing secret' });
    await expect(dialog.getByText('you will not see it again')).toBeVisible();
    const secret = ((await dialog.getByTestId('webhook-secret').textContent()) ?? '').trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    await checkPage(developer, 'webhooks-secret');
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await expect(dialog).toBeHidden();

    const endpoints = developer.getByRole('table', { name: 'test webhook endpoints' });
    await expect(endpoints.getByText(receiver.url)).toBeVisible();
    await expect(endpoints.getByText('verification.completed')).toBeVisible();
    await expect(endpoints.getByText('browser test receiver')).toBeVisible();
    const sending = endpoints.getByRole('switch', { name: `Send to ${receiver.url}` });
    await expect(sending).toBeChecked();
    // The listing never carries the secret again.
    expect(JSON.stringify(await (await consoleApi(developer, 'GET', '/webhooks/endpoints?environment=test')).json())).not.toContain(secret);

    // The playground's default scope and example input: a sandbox check.
    await developer.getByRole('link', { name: 'Playground' }).click();
    await developer.getByRole('button', { name: 'Run check' }).click();
    await expect(developer.getByTestId('result-reference')).toHaveText(/^vrf_/);
    const reference = (await developer.getByTestId('result-reference').textContent())!;

    // The page reads the deliveries every second: no reload, the delivery and its attempt appear.
    await developer.getByRole('link', { name: 'Webhooks' }).click();
    const delivery = developer.getByTestId('delivery-verification.completed');
    await expect(delivery.getByTestId('attempt-status')).toHaveText('200', { timeout: 10_000 });
    await expect(delivery.getByText('succeeded', { exact: true })).toBeVisible();
    await expect(delivery.getByText('received, thanks')).toBeVisible();
    await expect(delivery.getByText(/^\d+ ms$/)).toBeVisible();

    // The receiver got it, signed with the secret the page showed.
    const sent = receiver.received.filter((request) => (JSON.parse(request.body) as { type: string }).type === 'verification.completed');
    expect(sent).toHaveLength(1);
    const payload = new Webhook(secret).verify(sent[0].body, sent[0].headers) as { type: string; data: { reference: string; environment: string } };
    expect(payload.data).toMatchObject({ reference, environment: 'test' });
    await expect(delivery.getByText(sent[0].headers['webhook-id'])).toBeVisible();
    await checkPage(developer, 'webhooks');
    await expectNoSidewaysScroll(developer);

    // A resend is one more attempt, with the same webhook-id, seen on the page.
    await delivery.getByRole('button', { name: /^Resend verification\.completed/ }).click();
    await expect(delivery.getByTestId('attempt-status')).toHaveCount(2, { timeout: 10_000 });
    await expect.poll(() => receiver.received.length).toBe(2);
    expect(receiver.received[1].headers['webhook-id']).toBe(sent[0].headers['webhook-id']);

    // Turned off, then deleted after confirmation.
    await sending.focus();
    await developer.keyboard.press('Space');
    await expect(sending).not.toBeChecked();
    expect((await (await consoleApi(developer, 'GET', '/webhooks/endpoints?environment=test')).json()).data[0].enabled).toBe(false);
    developer.once('dialog', (confirmation) => void confirmation.accept());
    await endpoints.getByRole('button', { name: `Delete ${receiver.url}` }).click();
    await expect(developer.getByText('No test webhook endpoints yet.')).toBeVisible();

    // Finance: no webhooks page, and the server refuses an endpoint from it.
    const financeNav = finance.getByRole('navigation', { name: 'Pages' });
    await expect(financeNav.getByRole('link', { name: 'Wallet' })).toBeVisible();
    await expect(financeNav.getByRole('link', { name: 'Webhooks' })).toHaveCount(0);
    await finance.goto('/console/webhooks');
    await expect(finance.getByText('Your role does not give access to this page.')).toBeVisible();
    const refused = await consoleApi(finance, 'POST', '/webhooks/endpoints?environment=test', { url: receiver.url });
    expect(refused.status()).toBe(403);
    expect((await refused.json()).error.code).toBe('forbidden_role');
    expect((await consoleApi(developer, 'GET', '/webhooks/endpoints?environment=test')).status()).toBe(200);

    // Finance sets the low-balance alert on the wallet page; a developer may not.
    await financeNav.getByRole('link', { name: 'Wallet' }).click();
    await expect(finance.getByTestId('low-balance-threshold')).toHaveText('Off: no alert is sent.');
    await finance.getByRole('textbox', { name: 'Threshold (₦)' }).fill('5000');
    await finance.getByRole('button', { name: 'Set threshold' }).click();
    await expect(finance.getByTestId('low-balance-threshold')).toContainText('below ₦5,000.00');
    expect((await (await consoleApi(finance, 'GET', '/wallet/low_balance_threshold?environment=test')).json()).data).toEqual({ environment: 'test', thresholdKobo: 500_000 });
    await checkPage(finance, 'wallet-low-balance');
    await expectNoSidewaysScroll(finance);
    expect((await consoleApi(developer, 'PUT', '/wallet/low_balance_threshold?environment=test', { thresholdKobo: 1 })).status()).toBe(403);

    await developer.context().close();
    await finance.context().close();
  } finally {
    await receiver.close();
  }
});
