import { checkPage, consoleApi, eventually, expect, signUp, test } from './fixtures.js';

const SANDBOX_CREDIT_KOBO = 1_000_000;
const naira = (kobo: number) => `₦${(kobo / 100).toLocaleString('en-NG', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

test.describe('An integrator, from sign-up to the first check', () => {
  test('signs up, runs a sandbox check in the playground, and finds it in the verifications and the wallet', async ({ page }) => {
    await page.goto('/console/signup');
    await expect(page.getByRole('heading', { name: 'Create your account' })).toBeVisible();
    await checkPage(page, 'signup');

    await signUp(page);
    // The playground's default scope and example input answer "found" in the sandbox.
    await page.getByRole('button', { name: 'Run check' }).click();
    const reference = page.getByTestId('result-reference');
    await expect(reference).toHaveText(/^vrf_/);
    const checked = (await reference.textContent())!;
    await expect(page.getByText('found', { exact: true }).first()).toBeVisible();
    await expect(page.getByText(/curl -s -X POST .*\/v1\//)).toBeVisible();
    await checkPage(page, 'playground');

    await page.getByRole('link', { name: 'Verifications' }).click();
    await expect(page.getByRole('heading', { name: 'Verifications' })).toBeVisible();
    const row = page.getByRole('link', { name: checked });
    await eventually(page, () => expect(row).toBeVisible({ timeout: 5_000 }));
    await checkPage(page, 'verifications');

    await row.click();
    await expect(page.getByTestId('verification-reference')).toHaveText(checked);
    await expect(page.getByRole('table', { name: 'Result fields' })).toBeVisible();
    await checkPage(page, 'verification');

    await page.getByRole('link', { name: 'Wallet' }).click();
    await eventually(page, () => expect(page.getByRole('table', { name: 'Wallet transactions' }).getByText(checked).first()).toBeVisible({ timeout: 5_000 }));
    // The sandbox credit (SANDBOX_CREDIT_KOBO, 1,000,000 kobo by default) less the one check's price.
    const verification = (await (await consoleApi(page, 'GET', `/verifications/${checked}?environment=test`)).json()).data as { priceKobo: number; charged: boolean };
    expect(verification.charged).toBe(true);
    expect(verification.priceKobo).toBeGreaterThan(0);
    await expect(page.getByTestId('balance')).toHaveText(naira(SANDBOX_CREDIT_KOBO - verification.priceKobo));
    await checkPage(page, 'wallet');

    await page.getByRole('link', { name: 'Overview' }).click();
    await eventually(page, () => expect(page.getByRole('img', { name: /over the last 30 days: 1 in all \(found 1\)/ })).toBeVisible({ timeout: 5_000 }));
    await expect(page.getByRole('table', { name: 'Recent checks' }).getByText(checked)).toBeVisible();
    await checkPage(page, 'overview');

    for (const [link, heading, name] of [
      ['API keys', 'API keys', 'keys'],
      ['Team', 'Team', 'team'],
      ['Settings', 'Settings', 'settings'],
      ['Security', 'Security', 'sessions'],
    ] as const) {
      await page.getByRole('link', { name: link, exact: true }).click();
      await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
      await checkPage(page, name);
    }
  });

  test('runs a face match in the playground with an image chosen from a file', async ({ page }) => {
    await signUp(page);
    await page.getByRole('combobox', { name: 'Scope' }).click();
    await page.getByRole('option', { name: /^face_match/ }).click();
    // A PNG with bytes after its end: longer than the curl command shows whole.
    const png = Buffer.concat([Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'), Buffer.alloc(300)]);
    await page.getByLabel('image').setInputFiles({ name: 'face.png', mimeType: 'image/png', buffer: png });
    const dataUrl = `data:image/png;base64,${png.toString('base64')}`;
    await expect(page.getByText(/"image":"data:image\/png;base64,iVBOR.*… \(518 characters\)/)).toBeVisible();
    const sent = page.waitForRequest((request) => request.url().endsWith('/console/api/playground/face_match'));
    await page.getByRole('button', { name: 'Run check' }).click();
    expect(((await sent).postDataJSON() as { input: { image: string } }).input.image).toBe(dataUrl);
    await expect(page.getByTestId('result-reference')).toHaveText(/^vrf_/);
    await checkPage(page, 'playground-face-match');
  });

  test('switches to the live environment, where a new organization has no money and no checks', async ({ page }) => {
    await signUp(page);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByText('Live', { exact: true }).click();
    await expect(page.getByRole('heading', { name: 'Overview (live)' })).toBeVisible();
    await expect(page.getByTestId('balance')).toHaveText('₦0.00');
    await checkPage(page, 'overview-live');
    await page.reload();
    await expect(page.getByRole('heading', { name: 'Overview (live)' })).toBeVisible();
  });

  test('the sign-in, forgotten-password and mailbox pages', async ({ page }) => {
    await page.goto('/console/login');
    await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
    await checkPage(page, 'login');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await expect(page.getByRole('heading', { name: 'Reset your password' })).toBeVisible();
    await checkPage(page, 'forgot-password');
    await page.goto('/console/dev/mailbox');
    await expect(page.getByRole('heading', { name: 'Development mailbox' })).toBeVisible();
    await checkPage(page, 'mailbox');
  });
});
