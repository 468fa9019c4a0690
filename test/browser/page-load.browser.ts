import { expect, signUp, test } from './fixtures.js';

test('a page whose code fails to load (a redeploy replaced it) offers a reload instead of a blank page', async ({ page }) => {
  await signUp(page);
  // The API keys page's own chunk, as after a redeploy that removed the old hashed file.
  await page.route(/\/console\/assets\/keys-[^/]+\.js$/, (route) => route.fulfill({ status: 404, body: 'gone' }));
  await page.getByRole('link', { name: 'API keys' }).first().click();
  await expect(page.getByRole('alert')).toContainText('newer version of the console');
  await page.unroute(/\/console\/assets\/keys-[^/]+\.js$/);
  await page.getByRole('button', { name: 'Reload the page' }).click();
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
});
