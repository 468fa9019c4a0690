import type { Browser, Page } from '@playwright/test';
import { checkPage, consoleApi, expect, mailedLink, openLink, signUp, test, uniqueEmail } from './fixtures.js';

/** Invites `role` from the owner's team page and accepts the invitation in a browser context of its own. */
async function invite(owner: Page, browser: Browser, role: 'developer' | 'finance'): Promise<Page> {
  const email = uniqueEmail(role);
  await owner.goto('/console/team');
  await owner.getByLabel('Email').fill(email);
  await owner.getByRole('combobox', { name: 'Role', exact: true }).click();
  await owner.getByRole('option', { name: new RegExp(`^${role[0].toUpperCase()}${role.slice(1)}:`) }).click();
  await owner.getByRole('button', { name: 'Send invitation' }).click();
  await expect(owner.getByRole('table', { name: 'Pending invitations' }).getByText(email)).toBeVisible();
  const link = await mailedLink(owner, email, /invit/i);

  const member = await (await browser.newContext()).newPage();
  await openLink(member, link);
  await expect(member.getByRole('heading', { name: 'Join your team' })).toBeVisible();
  await checkPage(member, 'accept-invitation');
  await member.getByRole('textbox', { name: 'Password', exact: true }).fill('a member password of some length');
  await member.getByRole('button', { name: 'Accept the invitation' }).click();
  await expect(member.getByRole('heading', { name: /^Overview/ })).toBeVisible();
  return member;
}

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

  // Finance: the wallet; no keys, no playground, no verifications.
  const financeNav = finance.getByRole('navigation', { name: 'Pages' });
  await expect(financeNav.getByRole('link', { name: 'Wallet' })).toBeVisible();
  await expect(financeNav.getByRole('link', { name: 'API keys' })).toHaveCount(0);
  await expect(financeNav.getByRole('link', { name: 'Playground' })).toHaveCount(0);
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
