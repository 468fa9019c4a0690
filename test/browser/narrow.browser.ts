import { expect, signUp, test } from './fixtures.js';

/** Wider than the viewport: the page scrolls sideways. */
const overflow = async (page: import('@playwright/test').Page) => Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));

test('at a phone width (390 px), a long organization name and the API keys page fit without sideways scrolling', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signUp(page, { organization: `Acme ${'Verylongorganizationnamewithoutspaces'.repeat(3)} Holdings International Limited` });
  await page.goto('/console/');
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  expect(await overflow(page)).toBeLessThanOrEqual(0);
  // The header keeps the name to one line inside the screen, beside the controls.
  const name = await page
    .getByRole('banner')
    .getByText(/^Acme Verylong/)
    .boundingBox();
  expect(name).not.toBeNull();
  expect(name!.height).toBeLessThan(32);
  expect(name!.x + name!.width).toBeLessThanOrEqual(390);
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign out' })).toBeInViewport({ ratio: 1 });
  await page.goto('/console/keys');
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  expect(await overflow(page)).toBeLessThanOrEqual(0);
});
