import { eventually, expect, signUp, test } from './fixtures.js';

const DAY = /^\d{1,2} [A-Z][a-z]{2} \d{4}$/;
const DATE_TIME = /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}$/;

test("the overview's chart labels its days as every other date in the console (6 Dec 2026, not 12/5)", async ({ page }) => {
  await signUp(page);
  await page.getByRole('button', { name: 'Run check' }).click();
  await expect(page.getByTestId('result-reference')).toHaveText(/^vrf_/);
  await page.goto('/console/');
  const chart = page.getByRole('img', { name: /^Checks per day/ });
  await eventually(page, () => expect(chart).toBeVisible({ timeout: 5_000 }));
  // The axis is drawn on a canvas: the chart keeps the labels it drew.
  await expect(chart).toHaveAttribute('data-x-labels', /./);
  const labels = (await chart.getAttribute('data-x-labels'))!.split('|');
  expect(labels.length).toBeGreaterThan(1);
  for (const label of labels) expect(label).toMatch(DAY);
  const checked = page.getByRole('table', { name: 'Recent checks' }).getByRole('cell', { name: DATE_TIME });
  await expect(checked.first()).toBeVisible();
  // The table's moment and the chart's days are the same format, date first.
  expect((await checked.first().textContent())!.split(',')[0]).toMatch(DAY);
});
