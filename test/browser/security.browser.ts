import { onServiceDatabase } from './database.js';
import { consoleApi, expect, invite, signUp, test } from './fixtures.js';

test("a state-changing request without the session's CSRF token, or with another, is refused", async ({ page }) => {
  await signUp(page);
  const missing = await page.request.post('/console/api/keys', { data: { environment: 'test', name: 'forged' } });
  expect(missing.status()).toBe(403);
  expect((await missing.json()).error.code).toBe('csrf_failed');
  const wrong = await page.request.post('/console/api/keys', { data: { environment: 'test', name: 'forged' }, headers: { 'x-csrf-token': 'not-the-token' } });
  expect(wrong.status()).toBe(403);
  expect((await wrong.json()).error.code).toBe('csrf_failed');
  // The same request with the token goes through.
  expect((await consoleApi(page, 'POST', '/keys', { environment: 'test', name: 'genuine' })).status()).toBe(201);
  const names = ((await (await consoleApi(page, 'GET', '/keys')).json()).data as { name: string | null }[]).map((key) => key.name);
  expect(names).toContain('genuine');
  expect(names).not.toContain('forged');
});

test('a session revoked from another one ends: its next request lands on the sign-in page', async ({ page, browser }) => {
  const { email, password } = await signUp(page);
  const other = await (await browser.newContext()).newPage();
  await other.goto('/console/login');
  await other.getByLabel('Email').fill(email);
  await other.getByRole('textbox', { name: 'Password', exact: true }).fill(password);
  await other.getByRole('button', { name: 'Sign in' }).click();
  await expect(other.getByRole('heading', { name: /^Overview/ })).toBeVisible();

  await page.goto('/console/security');
  const rows = page.getByTestId('session-row');
  await expect(rows).toHaveCount(2);
  await rows.filter({ hasNotText: 'this one' }).getByRole('button', { name: 'Revoke' }).click();
  await expect(rows).toHaveCount(1);

  await other.getByRole('link', { name: 'Wallet' }).click();
  await expect(other.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await other.context().close();
});

test('an expired or unknown session cookie is a signed-out visitor, sent to the sign-in page', async ({ page }) => {
  await signUp(page);
  const cookies = await page.context().cookies();
  const session = cookies.find((cookie) => cookie.name === 'ivl_session');
  expect(session?.httpOnly).toBe(true);
  expect(session?.sameSite).toBe('Lax');
  await page.context().addCookies([{ ...session!, value: 'an-expired-session-token' }]);
  await page.getByRole('link', { name: 'Verifications' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
});

test('sign-in is throttled per account after repeated failures', async ({ page, browser }) => {
  const { email, password } = await signUp(page);
  const stranger = await (await browser.newContext()).newPage();
  await stranger.goto('/console/login');
  await stranger.getByLabel('Email').fill(email);
  const attempt = async (secret: string) => {
    await stranger.getByRole('textbox', { name: 'Password', exact: true }).fill(secret);
    await stranger.getByRole('button', { name: 'Sign in' }).click();
    return stranger.getByRole('alert');
  };
  for (let index = 0; index < 5; index++) await expect(await attempt(`wrong password ${index}`)).toBeVisible();
  // Even the right password is refused while the account is throttled.
  await expect(await attempt(password)).toContainText(/too many|try again/i);
  await expect(stranger.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await stranger.context().close();
});

test('a session left idle past CONSOLE_SESSION_IDLE_MINUTES ends: the next page lands on sign-in', async ({ page }) => {
  const { email } = await signUp(page);
  await page.getByRole('link', { name: 'Overview' }).click();
  await expect(page.getByRole('heading', { name: /^Overview/ })).toBeVisible();
  // Thirty-one minutes of idleness, written where the service keeps its sessions (the default idle time is 30 minutes).
  // The user by id (no column holds an email in clear).
  const user = ((await (await page.request.get('/console/api/session')).json()) as { data: { user: { id: string; email: string } } }).data.user;
  expect(user.email).toBe(email);
  const aged = await onServiceDatabase("update console_sessions set last_seen_at = now() - interval '31 minutes' where user_id = $1", [user.id]);
  expect(aged).toBe(1);
  await page.getByRole('link', { name: 'Wallet' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  expect((await page.context().cookies()).find((cookie) => cookie.name === 'ivl_session')).toBeUndefined();
});

test('a guessable password is refused at sign-up, the page saying why', async ({ page }) => {
  await page.goto('/console/signup');
  await page.getByLabel('Organization name').fill('Acme weak password');
  await page.getByLabel('Email').fill(`weak-${Math.random().toString(36).slice(2, 9)}@example.test`);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill('password12');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByRole('alert')).toContainText('password is too easy to guess');
  await expect(page.getByRole('heading', { name: 'Create your account' })).toBeVisible();
});

test('a member deletes its own account from the Security page; the last owner is refused', async ({ page, browser }) => {
  await signUp(page);
  const member = await invite(page, browser, 'developer');
  await member.goto('/console/security');
  const form = member.getByRole('form', { name: 'Delete your account' });
  await form.getByRole('textbox', { name: 'Password', exact: true }).fill('a member password of some length');
  await expect(form.getByRole('button', { name: 'Delete my account' })).toBeDisabled();
  await form.getByLabel('I understand this cannot be undone').check();
  await form.getByRole('button', { name: 'Delete my account' }).click();
  await expect(member.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await member.context().close();

  await page.goto('/console/security');
  const own = page.getByRole('form', { name: 'Delete your account' });
  await own.getByRole('textbox', { name: 'Password', exact: true }).fill('correct horse battery staple');
  await own.getByLabel('I understand this cannot be undone').check();
  await own.getByRole('button', { name: 'Delete my account' }).click();
  await expect(own.getByRole('alert')).toContainText(/last owner/i);
});
