import { consoleApi, expect, signUp, test } from './fixtures.js';

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

test('at a phone width (390 px), the team, verifications, wallet, settings, flows and sessions pages, with rows in them, fit without sideways scrolling', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await signUp(page, { organization: `Acme ${'Verylongorganizationnamewithoutspaces'.repeat(2)} Limited` });
  // A check (a row in the verifications and a debit in the wallet's transactions) and a flow with a session.
  await page.getByRole('button', { name: 'Run check' }).click();
  await expect(page.getByTestId('result-reference')).toHaveText(/^vrf_/);
  const issued = await consoleApi(page, 'POST', '/keys', { environment: 'test', name: 'narrow' });
  expect(issued.status()).toBe(201);
  const key = ((await issued.json()) as { data: { key: string } }).data.key;
  const flow = await consoleApi(page, 'POST', '/verification_flows?environment=test', {
    name: `Onboarding ${'withaverylongnamewithoutspaces'.repeat(2)}`,
    steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin', 'bvn'] }],
    decision: { faceMatchThreshold: 80, reviewMarginPoints: 10 },
    branding: { displayName: 'Acme Bank', colour: '#1C7ED6', logoUrl: null },
    allowedOrigins: ['https://acme.example'],
    redirectUrl: 'https://acme.example/onboarding/done',
  });
  expect(flow.status(), await flow.text()).toBe(201);
  const flowId = ((await flow.json()) as { data: { id: string } }).data.id;
  const session = await fetch(`${baseURL}/v1/verification_sessions`, {
    method: 'POST',
    headers: { 'x-service-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ flowId, customerId: `cus_${'averylongcustomeridentifier'.repeat(2)}` }),
  });
  expect(session.status).toBe(201);

  const pages: [path: string, heading: string, filled: () => Promise<void>][] = [
    ['/console/team', 'Team', () => expect(page.getByRole('table').first()).toBeVisible()],
    ['/console/verifications', 'Verifications', () => expect(page.getByRole('link', { name: /^vrf_/ }).first()).toBeVisible({ timeout: 10_000 })],
    ['/console/wallet', 'Wallet', () => expect(page.getByRole('table', { name: 'Wallet transactions' }).getByText(/^vrf_/).first()).toBeVisible({ timeout: 10_000 })],
    ['/console/settings', 'Settings', () => expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible()],
    ['/console/flows', 'Verification flows', () => expect(page.getByRole('link', { name: /^Onboarding/ })).toBeVisible({ timeout: 10_000 })],
    ['/console/sessions', 'Verification sessions', () => expect(page.getByRole('link', { name: /^vss_/ }).first()).toBeVisible({ timeout: 10_000 })],
  ];
  const overflowing: string[] = [];
  for (const [path, heading, filled] of pages) {
    await page.goto(path);
    await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
    await filled();
    const by = await overflow(page);
    if (by > 0) overflowing.push(`${path}: ${by} px`);
  }
  expect(overflowing).toEqual([]);
});
