import { checkPage, consoleApi, expect, invite, signUp, test, uniqueEmail } from './fixtures.js';

test('team roles: a developer has no wallet, a finance member has no keys or checks, and the server refuses them too', async ({ page, browser }) => {
  await signUp(page);
  const developer = await invite(page, browser, 'developer');
  const finance = await invite(page, browser, 'finance');

  // The developer: keys, playground and verifications; no wallet.
  const developerNav = developer.getByRole('navigation', { name: 'Pages' });
  await expect(developerNav.getByRole('link', { name: 'API keys' })).toBeVisible();
  await expect(developerNav.getByRole('link', { name: 'Wallet' })).toHaveCount(0);
  await developer.goto('/console/wallet');
  await expect(developer.getByText('Your role does not give access to this page.')).toBeVisible();
  const walletRefused = await consoleApi(developer, 'GET', '/wallet?environment=test');
  expect(walletRefused.status()).toBe(403);
  expect((await walletRefused.json()).error.code).toBe('forbidden_role');
  expect((await consoleApi(developer, 'POST', '/team/invitations', { email: uniqueEmail('x'), role: 'owner' })).status()).toBe(403);
  // Flows and sessions, yes; deciding a session in review is the owners'.
  await expect(developerNav.getByRole('link', { name: 'Flows' })).toBeVisible();
  const reviewRefused = await consoleApi(developer, 'POST', '/verification_sessions/vss_01JD3Q9ZK8W6V2C4X7N5B0M1TR/review?environment=test', {
    decision: 'approved',
    reason: 'faces_match',
  });
  expect([reviewRefused.status(), (await reviewRefused.json()).error.code]).toEqual([403, 'forbidden_role']);

  // Finance: the wallet; no keys, no playground, no verifications.
  const financeNav = finance.getByRole('navigation', { name: 'Pages' });
  await expect(financeNav.getByRole('link', { name: 'Wallet' })).toBeVisible();
  await expect(financeNav.getByRole('link', { name: 'API keys' })).toHaveCount(0);
  await expect(financeNav.getByRole('link', { name: 'Playground' })).toHaveCount(0);
  await expect(financeNav.getByRole('link', { name: 'Flows' })).toHaveCount(0);
  expect((await consoleApi(finance, 'GET', '/verification_flows?environment=test')).status()).toBe(403);
  await finance.goto('/console/keys');
  await expect(finance.getByText('Your role does not give access to this page.')).toBeVisible();
  await checkPage(finance, 'refused-page');
  const keyRefused = await consoleApi(finance, 'POST', '/keys', { environment: 'test', name: 'not mine' });
  expect(keyRefused.status()).toBe(403);
  expect((await keyRefused.json()).error.code).toBe('forbidden_role');
  expect((await consoleApi(finance, 'POST', '/playground/nin', { environment: 'test', input: { nin: '21440414976' } })).status()).toBe(403);
  expect((await consoleApi(finance, 'GET', '/wallet?environment=test')).status()).toBe(200);

  await developer.context().close();
  await finance.context().close();
});
