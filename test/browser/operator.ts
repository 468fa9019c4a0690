import { expect, type Browser, type Page } from '@playwright/test';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { generate } from 'otplib';
import { BROWSER_ADMIN_TOKEN } from './server.js';

export const OPERATOR_EMAIL = 'first.operator@example.test';
export const OPERATOR_PASSWORD = 'operator password for the browser tests';

/** The first operator's TOTP secret, kept beside the run's output so that a restarted test worker still has it. */
const SECRET_FILE = () => resolve('test-results', `operator-totp-${new URL(process.env.CONSOLE_BASE_URL!).port}.txt`);

/** The run's files of one secret's TOTP steps: one per step taken, created exclusively, so that two workers never take one step. */
const STEP_PREFIX = (secret: string) => `totp-step-${new URL(process.env.CONSOLE_BASE_URL!).port}-${createHash('sha256').update(secret).digest('hex').slice(0, 16)}-`;

/** Held by the worker signing the first operator in (the workers share that account). */
const SIGN_IN_LOCK = () => resolve('test-results', `operator-sign-in-${new URL(process.env.CONSOLE_BASE_URL!).port}.lock`);
/** A lock older than this was left by a worker that died while it held it. */
const STALE_LOCK_MS = 120_000;

/**
 * A code of a step later than any taken before with this secret in this run (the service takes each
 * step once, and only a step later than the last it accepted), waiting for the next step when the
 * current and the next one are taken. Each step is taken by creating its file exclusively: two
 * callers at once get two steps. Sign-ins with one secret must also reach the service in the order
 * of their steps: see alone().
 */
export async function totpCode(secret: string): Promise<string> {
  await mkdir(resolve('test-results'), { recursive: true });
  const prefix = STEP_PREFIX(secret);
  const taken = (await readdir(resolve('test-results'))).filter((name) => name.startsWith(prefix)).map((name) => Number(name.slice(prefix.length)));
  const current = Math.floor(Date.now() / 30_000);
  let step = Math.max(current, ...taken.map((last) => last + 1));
  for (; ; step++) {
    try {
      await writeFile(resolve('test-results', `${prefix}${step}`), '', { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  if (step > current + 1) await new Promise((done) => setTimeout(done, (step - 1) * 30_000 - Date.now() + 100));
  return generate({ secret, epoch: step * 30 });
}

/**
 * Runs `work` while no other worker signs the first operator in. Its sign-ins must reach the service
 * in the order of their steps: a code whose step is not later than the last accepted is refused, so
 * two workers that read the last step together, or submit out of turn, failed one of their sign-ins.
 */
async function alone<T>(work: () => Promise<T>): Promise<T> {
  await mkdir(resolve('test-results'), { recursive: true });
  for (;;) {
    try {
      await writeFile(SIGN_IN_LOCK(), String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const since = await stat(SIGN_IN_LOCK()).then(
        (held) => Date.now() - held.mtimeMs,
        () => 0,
      );
      if (since > STALE_LOCK_MS) await rm(SIGN_IN_LOCK(), { force: true });
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rm(SIGN_IN_LOCK(), { force: true });
  }
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
  await alone(async () => {
    if (!existsSync(SECRET_FILE())) return bootstrap(page);
    const secret = (await readFile(SECRET_FILE(), 'utf8')).trim();
    await page.goto('/console/operator/login');
    await page.getByRole('textbox', { name: 'Email', exact: true }).fill(OPERATOR_EMAIL);
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill(OPERATOR_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Code from your authenticator app').fill(await totpCode(secret));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('heading', { name: 'Organizations' })).toBeVisible();
  });
  return page;
}
