import { checkPage, consoleApi, eventually, expect, mailedLink, openLink, signUp, test, uniqueEmail } from './fixtures.js';
import { renderSVG } from 'uqr';
import { onServiceDatabase } from './database.js';
import { generateSecret } from 'otplib';
import { operatorPage, totpCode } from './operator.js';

test("a live-access request approved in the operators' console, a funding that reaches the wallet, then a live check", async ({ page, browser }) => {
  const { email, organization } = await signUp(page);

  // Live access needs a verified email: the link comes through the development mailbox.
  await openLink(page, await mailedLink(page, email, /confirm your email/i));
  await expect(page.getByText('Your email address is verified')).toBeVisible();
  await page.goto('/console/settings');
  await page.getByRole('button', { name: 'Request live access' }).click();
  await expect(page.getByTestId('live-access')).toHaveText('requested');

  const operator = await operatorPage(browser);
  await checkPage(operator, 'operator-organizations');
  await operator.getByRole('link', { name: 'Approval queue' }).click();
  const waiting = operator.getByRole('row').filter({ hasText: organization });
  await eventually(operator, () => expect(waiting).toBeVisible({ timeout: 5_000 }));
  await checkPage(operator, 'operator-queue');
  await waiting.getByRole('button', { name: `Approve ${organization}` }).click();
  await expect(waiting).toBeHidden();

  await operator.getByRole('link', { name: 'Organizations' }).click();
  await operator.getByLabel('Search').fill(organization);
  await operator.getByRole('link', { name: organization }).click();
  await expect(operator.getByRole('heading', { name: organization })).toBeVisible();
  await expect(operator.getByText('approved', { exact: true })).toBeVisible();
  const reference = `INV-${Date.now()}`;
  await operator.getByRole('combobox', { name: 'Fund wallet' }).click();
  await operator.getByRole('option', { name: 'live' }).click();
  await operator.getByLabel('Amount (kobo)').fill('500000');
  await operator.getByLabel('Funding reference').fill(reference);
  await operator.getByRole('button', { name: 'Fund', exact: true }).click();
  await expect(operator.getByText('Funded.')).toBeVisible();
  await eventually(operator, () => expect(operator.getByTestId('wallet-live-balance')).toHaveText('₦5,000.00', { timeout: 5_000 }));
  await checkPage(operator, 'operator-organization');

  // The integrator sees the funding in the live wallet.
  await page.goto('/console/wallet');
  await page.getByText('Live', { exact: true }).click();
  await eventually(page, async () => {
    await expect(page.getByTestId('balance')).toHaveText('₦5,000.00', { timeout: 5_000 });
    await expect(page.getByRole('table', { name: 'Wallet transactions' }).getByText(reference)).toBeVisible({ timeout: 5_000 });
  });
  await checkPage(page, 'wallet-live');

  // A live key, then a live check from the playground (the embedded default answers an organization with no upstream from the sandbox).
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('combobox', { name: 'Environment' }).click();
  await page.getByRole('option', { name: 'Live' }).click();
  await page.getByRole('button', { name: 'Create key' }).click();
  await expect(page.getByTestId('issued-key')).toHaveText(/^service_live_/);
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('button', { name: 'Run check' }).click();
  await expect(page.getByTestId('result-reference')).toHaveText(/^vrf_/);
  await expect(page.getByText(/charged$/)).toBeVisible();
  await page.getByRole('link', { name: 'Wallet' }).click();
  await eventually(page, () => expect(page.getByTestId('balance')).not.toHaveText('₦5,000.00', { timeout: 5_000 }));

  // The live wallet replayed from the event log: the funding less the live check, its hash chain verified, no difference with the read models.
  await operator.goto('/console/operator');
  await operator.getByLabel('Search').fill(organization);
  await operator.getByRole('link', { name: organization }).click();
  await operator.getByRole('link', { name: 'Audit these wallets' }).click();
  await operator.getByRole('button', { name: 'Replay' }).click();
  await expect(operator.getByTestId('audit-chain')).toHaveText('verified');
  await expect(operator.getByRole('table', { name: 'Wallet entries' }).getByText(reference)).toBeVisible();
  await expect(operator.getByTestId('audit-balance')).not.toHaveText('₦5,000.00');
  await operator.getByRole('button', { name: 'Reconcile' }).click();
  await expect(operator.getByTestId('reconcile-result')).toContainText('No difference');
  await checkPage(operator, 'operator-audit');

  for (const [link, heading, name] of [
    ['Projections', 'Projections', 'operator-projections'],
    ['Account', 'Operators and your account', 'operator-account'],
  ] as const) {
    await operator.getByRole('link', { name: link, exact: true }).click();
    await expect(operator.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
    await checkPage(operator, name);
  }

  // Renamed by the operator: the organization's page and the integrator's console show the new name.
  await operator.goto('/console/operator');
  await operator.getByLabel('Search').fill(organization);
  await operator.getByRole('link', { name: organization }).click();
  const renamed = `${organization} Holdings`;
  await operator.getByLabel('Organization name').fill(renamed);
  await operator.getByRole('button', { name: 'Rename' }).click();
  await expect(operator.getByText('Renamed.')).toBeVisible();
  await expect(operator.getByRole('heading', { name: renamed, level: 1 })).toBeVisible();
  await page.reload();
  await expect(page.getByText(renamed, { exact: true }).first()).toBeVisible();
  await operator.context().close();
});

test("the operators' sign-in page", async ({ page }) => {
  await page.goto('/console/operator/login');
  await expect(page.getByRole('heading', { name: "Operators' sign-in" })).toBeVisible();
  await checkPage(page, 'operator-login');
});

test('two TOTP codes taken at once with one secret are of two steps', async () => {
  // Two workers reading the secret's last step together took the same step, and the service refused the second sign-in.
  const secret = generateSecret();
  await totpCode(generateSecret()); // the run's record of steps exists, as after any sign-in
  const codes = await Promise.all([totpCode(secret), totpCode(secret)]);
  expect(codes[0]).not.toBe(codes[1]);
});

test('the first operator signed in from two workers at once: each sign-in takes a TOTP step of its own, in turn, and both open the console', async ({ browser }) => {
  // The browser tests' workers share this account; the service accepts only a step later than the last it accepted.
  const operators = await Promise.all([operatorPage(browser), operatorPage(browser)]);
  for (const operator of operators) {
    await expect(operator.getByRole('heading', { name: 'Organizations' })).toBeVisible();
    await operator.context().close();
  }
});

test('an auditor invited by an operator sees an organization and can change nothing', async ({ page, browser }) => {
  const { organization } = await signUp(page);
  const operator = await operatorPage(browser);
  const email = uniqueEmail('auditor');
  await operator.getByRole('link', { name: 'Account', exact: true }).click();
  await operator.getByLabel('Invite by email').fill(email);
  await operator.getByRole('button', { name: 'Invite', exact: true }).click();
  await expect(operator.getByText('Invitation sent.')).toBeVisible();

  const auditor = await (await browser.newContext()).newPage();
  await openLink(auditor, await mailedLink(operator, email, /invited/i));
  await auditor.getByRole('textbox', { name: 'Password', exact: true }).fill('an auditor password of some length');
  await auditor.getByRole('button', { name: 'Accept the invitation' }).click();
  await expect(auditor.getByRole('heading', { name: 'Set up your second factor' })).toBeVisible();
  await auditor.getByRole('button', { name: 'Show the secret' }).click();
  const secret = (await auditor.getByTestId('totp-secret').textContent())!.trim();
  // The QR code is the otpauth URL of the link beside it, which carries the secret shown.
  const otpauthUrl = (await auditor.getByRole('link', { name: 'Open in an authenticator app on this device' }).getAttribute('href'))!;
  expect(new URL(otpauthUrl).searchParams.get('secret')).toBe(secret);
  await expect(auditor.getByRole('img', { name: 'QR code of the secret, for an authenticator app' })).toBeVisible();
  expect(await auditor.getByTestId('totp-qr').getAttribute('src')).toBe(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(renderSVG(otpauthUrl, { border: 2 }))}`);
  await checkPage(auditor, 'operator-totp-enrolment');
  await auditor.getByLabel('Code').fill(await totpCode(secret));
  await auditor.getByRole('button', { name: 'Confirm' }).click();
  await expect(auditor.getByRole('heading', { name: 'Organizations' })).toBeVisible();

  await auditor.getByLabel('Search').fill(organization);
  await auditor.getByRole('link', { name: organization }).click();
  await expect(auditor.getByText('Auditor account: you can see everything here and change nothing.')).toBeVisible();
  for (const control of ['Approve', 'Suspend', 'Fund', 'Issue key', 'Save prices']) await expect(auditor.getByRole('button', { name: control, exact: true })).toHaveCount(0);
  await checkPage(auditor, 'auditor-organization');
  const id = new URL(auditor.url()).pathname.split('/').pop()!;
  const refused = await consoleApi(auditor, 'POST', `/operator/organizations/${id}/approve`);
  expect(refused.status()).toBe(403);
  expect((await refused.json()).error.code).toBe('read_only');
  await auditor.context().close();
  await operator.context().close();
});

test("a stopped projection's error on the projections page", async ({ browser }) => {
  // A stop as the runner records one (projection-runner.ts), cleared again at the end as an operator's reset would.
  const name = 'verifications';
  const message = 'a stop made by the browser test';
  const stopped = await onServiceDatabase(`update projection_checkpoints set state = 'stopped', error = $2, failed_position = '1' where name = $1 and state <> 'stopped'`, [
    name,
    message,
  ]);
  expect(stopped).toBe(1);
  try {
    const operator = await operatorPage(browser);
    await operator.getByRole('link', { name: 'Projections', exact: true }).click();
    const row = operator.getByRole('row').filter({ hasText: name }).first();
    await expect(row.getByText('stopped')).toBeVisible();
    await expect(row.getByText(message)).toBeVisible();
    await operator.context().close();
  } finally {
    await onServiceDatabase(`update projection_checkpoints set state = 'running', error = null, failed_position = null where name = $1`, [name]);
  }
});

test('the checks recovery cannot settle on the projections page, with no personal data', async ({ browser }) => {
  // A row as the recovery pass sets one aside (recovery.ts), its next attempt far off so that no pass takes it meanwhile,
  // and the reservation it holds (a pass forgets the rows whose reservation is gone).
  const reference = `vrf_browser_unsettled_${Date.now()}`;
  const reason = 'stream_damaged: wallet-org_browser.test is deleted';
  await onServiceDatabase(
    `with held as (insert into wallet_reservations (reference, organization_id, environment, amount_kobo, reserved_at)
                   values ($1, 'org_browser_unsettled', 'live', 5000, now() - interval '2 hours'))
     insert into verification_recovery_unsettled (reference, organization_id, environment, reason, attempts, first_failed_at, last_failed_at, next_attempt_at)
     values ($1, 'org_browser_unsettled', 'live', $2, 3, now() - interval '2 hours', now() - interval '5 minutes', now() + interval '1 day')`,
    [reference, reason],
  );
  try {
    const operator = await operatorPage(browser);
    await operator.getByRole('link', { name: 'Projections', exact: true }).click();
    const table = operator.getByRole('table', { name: 'Checks recovery cannot settle' });
    const row = table.getByRole('row').filter({ hasText: reference });
    await expect(row).toBeVisible();
    await expect(row.getByRole('link', { name: 'org_browser_unsettled' })).toHaveAttribute('href', /\/operator\/organizations\/org_browser_unsettled$/);
    await expect(row.getByText(reason)).toBeVisible();
    await expect(row.getByRole('cell', { name: '3', exact: true })).toBeVisible();
    await operator.context().close();
  } finally {
    await onServiceDatabase('with held as (delete from wallet_reservations where reference = $1) delete from verification_recovery_unsettled where reference = $1', [reference]);
  }
});

test("an operator sets a live upstream with a fallback, each with its credentials, from the organization's page", async ({ page, browser }) => {
  const { organization } = await signUp(page);
  const operator = await operatorPage(browser);
  await operator.getByLabel('Search').fill(organization);
  await operator.getByRole('link', { name: organization }).click();
  // Scopes both upstreams serve: the others would be refused with the configuration.
  const id = new URL(operator.url()).pathname.split('/').pop()!;
  expect((await consoleApi(operator, 'PUT', `/operator/organizations/${id}/scopes`, { scopes: ['nin', 'bvn'] })).status()).toBe(200);
  await operator.reload();
  await operator.getByRole('combobox', { name: 'Provider' }).click();
  await operator.getByRole('option', { name: 'dojah' }).click();
  await operator.getByLabel('Credentials (JSON)').fill('{"appId": "app-1", "secretKey": "a dojah secret"}');
  await operator.getByRole('combobox', { name: 'Fallback' }).click();
  await operator.getByRole('option', { name: 'prembly' }).click();
  await operator.getByLabel('Fallback credentials (JSON)').fill('{"appId": "app-2", "apiKey": "a prembly key"}');
  await operator.getByRole('button', { name: 'Set provider' }).click();
  await expect(operator.getByText('Saved.')).toBeVisible();
  await expect(operator.getByText(/dojah \(fallback prembly\)/)).toBeVisible();
  // Neither secret is shown again.
  await expect(operator.getByText(/a dojah secret|a prembly key/)).toHaveCount(0);
  await operator.context().close();
});
