import { onServiceDatabase } from './database.js';
import { checkPage, consoleApi, expect, invite, signUp, test } from './fixtures.js';

test('the payments audit page shows each top-up with what the provider settled, what was credited and the fees, and flags one the provider now reports otherwise; a developer cannot open it', async ({
  page,
  browser,
}) => {
  await signUp(page);
  const developer = await invite(page, browser, 'developer');

  // Two top-ups through the sandbox checkout: ₦300 and ₦400, both credited.
  const references: string[] = [];
  for (const amount of ['300', '400']) {
    await page.goto('/console/wallet');
    await page.getByLabel('Amount (₦)').fill(amount);
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.getByRole('button', { name: `Pay ₦${amount}.00` }).click();
    await expect(page.getByTestId('topup-status')).toContainText('Credited', { timeout: 5_000 });
    references.push(new URL(page.url()).searchParams.get('topup') as string);
  }
  const [clean, changed] = references;
  // The top-up form shows the limits in force and what is left of today's.
  await expect(page.getByTestId('topup-limits')).toHaveText('From ₦100.00 to ₦5,000,000.00 a top-up, ₦10,000,000.00 a day: ₦9,999,300.00 left today.');

  await page.getByRole('link', { name: 'Payments audit' }).click();
  await expect(page.getByRole('heading', { name: 'Payments reconciliation (test)' })).toBeVisible();
  await expect(page.getByTestId('reconciliation-totals')).toContainText('2 top-ups: ₦700.00 settled by the provider, ₦700.00 credited, ₦10.50 in the provider');
  await expect(page.getByTestId('reconciliation-totals')).toContainText('No difference.');

  // The provider's record of the second now says ₦250: the page flags it, and only it.
  expect(await onServiceDatabase('update sandbox_payments set amount_kobo = 25000 where reference = $1', [changed])).toBe(1);
  await page.reload();
  await expect(page.getByTestId(`flags-${changed}`)).toHaveText('Mismatch');
  await expect(page.getByTestId(`flags-${clean}`)).toHaveText('None');
  const row = page.getByRole('row').filter({ hasText: changed });
  await expect(row).toContainText('₦250.00');
  await expect(row).toContainText('₦400.00');
  await expect(page.getByTestId('reconciliation-totals')).toContainText('₦550.00 settled by the provider, ₦700.00 credited');
  await expect(page.getByTestId('reconciliation-totals')).toContainText('1 flagged.');
  await checkPage(page, 'payments-audit');

  // The developer has no such page, and the server refuses the reconciliation.
  await developer.goto('/console/wallet');
  await expect(developer.getByRole('link', { name: 'Payments audit' })).toHaveCount(0);
  expect((await consoleApi(developer, 'GET', '/wallet/topups/reconciliation?environment=test')).status()).toBe(403);
  await developer.context().close();
});
