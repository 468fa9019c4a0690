import type { Page } from '@playwright/test';
import { generate } from 'otplib';
import { checkPage, expect, mailedLink, openLink, signUp, test, uniqueEmail } from './fixtures.js';

// Passkeys need a host name for their relying party (an IP address is none): the service's default
// relying party is localhost on its port, so these pages are opened at localhost.
test.use({ baseURL: process.env.CONSOLE_BASE_URL?.replace('127.0.0.1', 'localhost') });

/** The code of the step `offset` steps from now, computed with the TOTP library the service uses. */
const codeAt = (secret: string, offset: number): Promise<string> => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });

async function signOut(page: Page): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/console/login');
  await page.getByLabel('Email').fill(email);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Second factor' })).toBeVisible();
}

test('an authenticator app: set up with its QR code and backup codes, then sign-in with a code and with a backup code', async ({ page }) => {
  const { email, password } = await signUp(page);
  await page.getByRole('link', { name: 'Security', exact: true }).click();
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  await expect(page.getByTestId('totp-qr')).toBeVisible();
  const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
  // The current step's code: accepted even if the step ends before the service checks it (one step
  // of tolerance). The previous step's, used here before, was refused when a step ended meanwhile.
  await page.getByLabel('Code from the app').fill(await codeAt(secret, 0));
  await page.getByRole('button', { name: 'Turn on' }).click();
  const shown = page.getByTestId('backup-codes').locator('p');
  await expect(shown).toHaveCount(10);
  const backupCodes = (await shown.allTextContents()).map((code) => code.trim());
  await checkPage(page, 'second-factor-backup-codes');
  await page.getByRole('button', { name: 'I have saved them' }).click();
  await expect(page.getByText('10 backup codes left.')).toBeVisible();
  await signOut(page);

  // The password opens only the second factor's step; the code of the app finishes the sign-in.
  await signIn(page, email, password);
  await checkPage(page, 'second-factor-step');
  // The next step's: later than the one the set-up took, which the service requires.
  await page.getByLabel('Authenticator code').fill(await codeAt(secret, 1));
  await page.getByRole('button', { name: 'Verify' }).click();
  await expect(page.getByRole('heading', { name: /^Overview/ })).toBeVisible();
  await signOut(page);

  // A backup code, once.
  await signIn(page, email, password);
  await page.getByRole('button', { name: 'Use a backup code' }).click();
  await page.getByLabel('Backup code').fill(backupCodes[0]);
  await page.getByRole('button', { name: 'Verify' }).click();
  await expect(page.getByRole('heading', { name: /^Overview/ })).toBeVisible();
  await signOut(page);
  await signIn(page, email, password);
  await page.getByRole('button', { name: 'Use a backup code' }).click();
  await page.getByLabel('Backup code').fill(backupCodes[0]);
  await page.getByRole('button', { name: 'Verify' }).click();
  await expect(page.getByRole('alert')).toContainText('wrong or was used already');
  await expect(page.getByRole('heading', { name: 'Second factor' })).toBeVisible();
});

test('a passkey through Chromium\u2019s virtual authenticator: registered on the Security page, then the second factor of a sign-in; required of the organization by its owner', async ({
  page,
  browser,
}) => {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  const { email, password } = await signUp(page);
  await page.getByRole('link', { name: 'Security', exact: true }).click();
  await page.getByLabel("New passkey's name").fill('Virtual authenticator');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await expect(page.getByTestId('passkey-row')).toHaveCount(1);
  await expect(page.getByTestId('passkey-row').getByLabel('Name')).toHaveValue('Virtual authenticator');
  expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);

  // The owner requires a second factor of every member (they have one now).
  const requirement = page.getByRole('switch', { name: 'Require a second factor of every member' });
  await expect(requirement).toBeEnabled();
  await requirement.click({ force: true });
  await expect(requirement).toBeChecked();
  await checkPage(page, 'security-second-factor');
  await signOut(page);

  await signIn(page, email, password);
  await page.getByRole('button', { name: 'Use a passkey' }).click();
  await expect(page.getByRole('heading', { name: /^Overview/ })).toBeVisible();
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  expect(credentials[0].signCount).toBeGreaterThan(0);

  // A member invited now is sent to set up a second factor, and reaches the console once they have.
  const memberEmail = uniqueEmail('member');
  await page.goto('/console/team');
  await page.getByLabel('Email').fill(memberEmail);
  await page.getByRole('button', { name: 'Send invitation' }).click();
  const member = await (await browser.newContext()).newPage();
  await openLink(member, await mailedLink(page, memberEmail, /invit/i));
  await member.getByRole('textbox', { name: 'Password', exact: true }).fill('a member password of some length');
  await member.getByRole('button', { name: 'Accept the invitation' }).click();
  await expect(member.getByRole('heading', { name: 'Set up a second factor' })).toBeVisible();
  await member.goto('/console/verifications');
  await expect(member.getByRole('heading', { name: 'Set up a second factor' })).toBeVisible();
  await checkPage(member, 'second-factor-setup');
  await member.getByRole('button', { name: 'Set up an authenticator app' }).click();
  const secret = (await member.getByTestId('totp-secret').textContent())!.trim();
  await member.getByLabel('Code from the app').fill(await codeAt(secret, 0));
  await member.getByRole('button', { name: 'Turn on' }).click();
  await expect(member.getByTestId('backup-codes').locator('p')).toHaveCount(10);
  await member.getByRole('button', { name: 'I have saved them' }).click();
  await expect(member.getByRole('heading', { name: /^Overview/ })).toBeVisible();
  await member.context().close();
});
