import { onServiceDatabase } from './database.js';
import { checkPage, consoleApi, eventually, expect, signUp, test } from './fixtures.js';
import { operatorPage } from './operator.js';

/** The text pdfkit wrote (uncompressed): its hex strings, decoded and joined. */
const pdfText = (pdf: Buffer) => [...pdf.toString('latin1').matchAll(/<([0-9a-f]+)>/g)].map((match) => Buffer.from(match[1], 'hex').toString('latin1')).join('');

test("a simulated sandbox transfer credits the test wallet; an operator resolves the payments that need one and downloads the organization's receipts and statement", async ({
  page,
  browser,
}) => {
  const { organization } = await signUp(page);

  // The test wallet's transfer account, then a transfer into it as a payer would send one.
  await page.goto('/console/wallet');
  await page.getByRole('button', { name: 'Get a transfer account' }).click();
  await expect(page.getByTestId('transfer-account')).toContainText('Sandbox Bank');
  await page.getByLabel('Transfer amount (₦)').fill('450');
  await page.getByRole('button', { name: 'Simulate a transfer' }).click();
  await expect(page.getByTestId('simulated-transfer')).toHaveText(/^Transfer SBX[0-9A-F]{16}: credited\.$/);
  await eventually(page, () => expect(page.getByRole('table', { name: 'Top-ups' })).toContainText('₦450.00', { timeout: 5_000 }));
  await checkPage(page, 'wallet-simulated-transfer');

  // Two top-ups that need a person: one the provider settled without a word to us, one it settled for another amount (flagged on the payer's return).
  const start = async (amountKobo: number) =>
    ((await (await consoleApi(page, 'POST', '/wallet/topups?environment=test', { amountKobo })).json()) as { data: { reference: string } }).data.reference;
  const silent = await start(30_000);
  const other = await start(40_000);
  expect(await onServiceDatabase(`update sandbox_payments set status = 'success', paid_at = now() where reference = $1`, [silent])).toBe(1);
  expect(await onServiceDatabase(`update sandbox_payments set status = 'success', paid_at = now(), amount_kobo = 4000 where reference = $1`, [other])).toBe(1);
  await page.request.get(`/payments/return?reference=${other}`, { maxRedirects: 0 });

  const operator = await operatorPage(browser);
  await operator.getByRole('link', { name: 'Payments' }).click();
  const silentCard = operator.getByRole('region', { name: `Top-up ${silent}` }).or(operator.getByLabel(`Top-up ${silent}`));
  const otherCard = operator.getByLabel(`Top-up ${other}`);
  await eventually(operator, () => expect(otherCard).toContainText('Flagged: amount_mismatch', { timeout: 5_000 }));
  await expect(silentCard).toContainText('Settled, not credited');
  await expect(otherCard).toContainText('Settled ₦40.00');
  await expect(otherCard).toContainText('Started for ₦400.00');
  await checkPage(operator, 'operator-payments');

  await silentCard.getByRole('button', { name: 'Credit ₦300.00' }).click();
  await expect(silentCard).toBeHidden();
  await otherCard.getByRole('combobox', { name: 'Dismiss because' }).click();
  await operator.getByRole('option', { name: 'Refunded to the payer' }).click();
  await otherCard.getByRole('button', { name: 'Dismiss' }).click();
  await expect(otherCard).toBeHidden();

  // The organization's page: its test top-ups with their receipts, and the month's statement.
  await operator.getByRole('link', { name: 'Organizations' }).click();
  await operator.getByLabel('Search').fill(organization);
  await operator.getByRole('link', { name: organization }).click();
  await operator.getByRole('combobox', { name: 'Wallet shown' }).click();
  await operator.getByRole('option', { name: 'test' }).click();
  const receiptHref = await operator.getByRole('link', { name: `Receipt of ${silent}` }).getAttribute('href');
  const receipt = await operator.request.get(receiptHref as string);
  expect(receipt.headers()['content-type']).toBe('application/pdf');
  expect(pdfText(await receipt.body())).toContain('Credited to the walletNGN 300.00');
  const statementHref = await operator.getByRole('link', { name: 'Download statement (PDF)' }).getAttribute('href');
  const statement = await operator.request.get(statementHref as string);
  expect(statement.status()).toBe(200);
  expect(pdfText(await statement.body())).toContain('Fundings (3)');
  await checkPage(operator, 'operator-organization-topups');
  await operator.context().close();
});
