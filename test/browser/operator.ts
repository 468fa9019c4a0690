import { expect, type Browser, type Page } from '@playwright/test';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { generate } from 'otplib';
import { BROWSER_ADMIN_TOKEN } from './server.js';

export const OPERATOR_EMAIL = 'first.operator@example.test';
export const OPERATOR_PASSWORD = 'operator password for the browser tests';

/** The first operator's TOTP secret, kept beside the run's output so that a restarted test worker still has it. */
const SECRET_FILE = () => resolve('test-results', `operator-totp-${new URL(process.env.CONSOLE_BASE_URL!).port}.txt`);

/** The last TOTP step used per secret, kept beside the run's output like the secret. */
const STEPS_FILE = () => resolve('test-results', `totp-steps-${new URL(process.env.CONSOLE_BASE_URL!).port}.json`);

/**
 * A code of a step later than any used before with this secret (the service takes each step once),
 * waiting for the next step when the current and the next one are used up.
 */
export async function totpCode(secret: string): Promise<string> {
  const steps: Record<string, number> = existsSync(STEPS_FILE()) ? JSON.parse(await readFile(STEPS_FILE(), 'utf8')) : {};
  const current = Math.floor(Date.now() / 30_000);
  const step = Math.max(current, (steps[secret] ?? 0) + 1);
  if (step > current + 1) await new Promise((done) => setTimeout(done, (step - 1) * 30_000 - Date.now() + 100));
  await writeFile(STEPS_FILE(), JSON.stringify({ ...steps, [secret]: step }));
  return generate({ secret, epoch: step * 30 });
}

/** Creates the first operator from the admin token and enrols its second factor, through the pages. */
async function bootstrap(page: Page): Promise<void> {
  await page.goto('/console/operator/login');
  await page.getByLabel('Admin token').fill(BROWSER_ADMIN_TOKEN);
  await page.getByLabel('Your email').fill(OPERATOR_EMAIL);
  await page.getByLabel('Choose a password').fill(OPERATOR_PASSWORD);
  await page.getByRole('button', { name: 'Create the account' }).click();
  await expect(page.getByRole('heading', { name: 'Set up your second factor' })).toBeVisible();
  await page.getByRole('button', { name: 'Show the secret' }).click();
  const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
  await writeFile(SECRET_FILE(), secret);
  await page.getByLabel('Code').fill(await totpCode(secret));
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByRole('heading', { name: 'Organizations' })).toBeVisible();
}

/** Signs in as the first operator (created on the first call of the run) in a browser context of its own. */
export async function operatorPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  if (!existsSync(SECRET_FILE())) {
    await bootstrap(page);
    return page;
  }
  const secret = (await readFile(SECRET_FILE(), 'utf8')).trim();
  await page.goto('/console/operator/login');
  await page.getByRole('textbox', { name: 'Email', exact: true }).fill(OPERATOR_EMAIL);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill(OPERATOR_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Code from your authenticator app').fill(await totpCode(secret));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Organizations' })).toBeVisible();
  return page;
}
