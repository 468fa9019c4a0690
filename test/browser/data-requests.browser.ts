import { checkPage, consoleApi, expect, signUp, test } from './fixtures.js';

/** Wider than the viewport: the page scrolls sideways. */
const overflow = async (page: import('@playwright/test').Page) => Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));

test("an owner's Data requests page lists the export and the hold, masked, and lifts the hold; it fits a phone", async ({ page }) => {
  await signUp(page);
  const issued = await consoleApi(page, 'POST', '/keys', { environment: 'test', name: 'Data requests' });
  expect(issued.status()).toBe(201);
  const key = ((await issued.json()) as { data: { key: string } }).data.key;
  const api = (path: string, data: unknown) => page.request.post(path, { headers: { 'x-service-key': key, 'content-type': 'application/json' }, data });
  const nin = '81440414976';
  expect((await api('/v1/nin', { nin })).status()).toBe(201);
  expect((await api('/v1/data-subjects/export', { nin })).status()).toBe(200);
  expect((await api('/v1/data-subjects/holds', { subject: { nin }, reason: 'aml_record_keeping' })).status()).toBe(201);

  await page.getByRole('link', { name: 'Data requests' }).click();
  await expect(page.getByRole('heading', { name: 'Data requests' })).toBeVisible();
  const hold = page.getByRole('table', { name: 'Holds' }).getByRole('row').filter({ hasText: 'aml_record_keeping' });
  await expect(hold).toContainText('nin ***976');
  await expect(page.getByRole('table', { name: 'Exports and erasures' }).getByRole('row').filter({ hasText: 'export' })).toContainText('nin ***976');
  await expect(page.getByText(nin)).toHaveCount(0);
  await checkPage(page, 'data-requests');

  await hold.getByRole('button', { name: 'Lift' }).click();
  // The state cell, not the row: the Until column reads 'until lifted' before the lift.
  await expect(hold.getByRole('cell').last()).toContainText(/^lifted /);
  await expect(hold.getByRole('button', { name: 'Lift' })).toHaveCount(0);
  // Lifted: the subject's erasure goes through.
  expect((await api('/v1/data-subjects/erasure', { nin })).status()).toBe(200);

  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Data requests' })).toBeVisible();
  expect(await overflow(page)).toBeLessThanOrEqual(0);
});
