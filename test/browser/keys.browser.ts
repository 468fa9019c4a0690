import { checkPage, expect, signUp, test } from './fixtures.js';

test('a key is shown once when created, works on the API, and gets 401 once revoked', async ({ page }) => {
  await signUp(page);
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByLabel('Name').fill('Backend server');
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.getByRole('dialog', { name: 'Your new key' });
  await expect(dialog).toBeVisible();
  const key = (await dialog.getByTestId('issued-key').textContent())!.trim();
  expect(key).toMatch(/^service_test_/);
  await expect(dialog.getByRole('button', { name: 'Copy the key' })).toBeVisible();
  await checkPage(page, 'key-created');
  await dialog.getByRole('button', { name: 'I have copied it' }).click();
  await expect(dialog).toBeHidden();

  // Shown once: nowhere on the page afterwards, nor after a reload.
  await expect(page.getByText(key)).toHaveCount(0);
  await page.reload();
  const row = page.getByRole('row').filter({ hasText: 'Backend server' });
  await expect(row).toBeVisible();
  await expect(page.getByText(key)).toHaveCount(0);
  await expect(row).toContainText(key.slice(-4));
  await expect(row).toContainText('never');

  const check = () => page.request.post('/v1/nin', { headers: { 'x-service-key': key, 'content-type': 'application/json' }, data: { nin: '21440414976' } });
  expect((await check()).status()).toBe(201);
  await page.reload();
  await expect(page.getByRole('row').filter({ hasText: 'Backend server' })).not.toContainText('never');

  page.once('dialog', (confirm) => void confirm.accept());
  await page
    .getByRole('row')
    .filter({ hasText: 'Backend server' })
    .getByRole('button', { name: /^Revoke/ })
    .click();
  await expect(page.getByRole('row').filter({ hasText: 'Backend server' })).toContainText('revoked');
  await expect.poll(async () => (await check()).status(), { timeout: 10_000 }).toBe(401);
});
