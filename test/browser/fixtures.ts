import { AxeBuilder } from '@axe-core/playwright';
import { expect, test as base, type Browser, type Page } from '@playwright/test';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';

export { expect };

/** Screenshots of every page at these widths, saved (not committed) under test-results/screenshots. */
const WIDTHS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;
export const SCREENSHOT_DIR = resolve('test-results', 'screenshots');
/** How long a page is left to settle at a width before its screenshot. */
const SCREENSHOT_SETTLE_MS = 150;
/**
 * How long a page is left to settle once its own width is back: the navigation bar slides in
 * (Mantine's 200 ms transition), and a click aimed while it moves lands beside its target.
 */
const LAYOUT_SETTLE_MS = 300;

export const test = base.extend<{ baseURL: string }>({
  baseURL: async ({}, use) => {
    const url = process.env.CONSOLE_BASE_URL;
    if (url === undefined) throw new Error('CONSOLE_BASE_URL is not set: the global setup starts the service');
    await use(url);
  },
});

/** A new address for each sign-up, so that every test has an organization of its own. */
export function uniqueEmail(label: string): string {
  return `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.test`;
}

/**
 * Every page of the console passes through here once it shows what it is for: axe finds no
 * serious or critical violation, and it is photographed at desktop and phone widths.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  // Transitions over first: axe measures the colours of a dialog still fading in as too faint.
  await page.evaluate(() => {
    interface Running {
      readonly effect: { getComputedTiming(): { iterations?: number } } | null;
      readonly finished: Promise<unknown>;
    }
    const running = (globalThis as unknown as { document: { getAnimations(): Running[] } }).document.getAnimations();
    const finite = running.filter((animation) => animation.effect?.getComputedTiming().iterations !== Infinity);
    return Promise.race([Promise.all(finite.map((animation) => animation.finished.catch(() => undefined))), new Promise((resolve) => setTimeout(resolve, 2_000))]);
  });
  const results = await new AxeBuilder({ page }).analyze();
  const grave = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  expect(
    grave.map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`),
    `accessibility of ${name}`,
  ).toEqual([]);
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize();
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(SCREENSHOT_SETTLE_MS);
    await page.screenshot({ path: resolve(SCREENSHOT_DIR, `${name}-${label}.png`), fullPage: true });
  }
  if (original !== null) {
    await page.setViewportSize(original);
    await page.waitForTimeout(LAYOUT_SETTLE_MS);
  }
}

/** Signs up a new organization through the console's form, signs in and lands on the playground. */
export async function signUp(page: Page, options: { organization?: string; email?: string; password?: string } = {}) {
  const email = options.email ?? uniqueEmail('owner');
  const password = options.password ?? 'correct horse battery staple';
  const organization = options.organization ?? `Acme ${Math.random().toString(36).slice(2, 7)}`;
  await page.goto('/console/signup');
  await page.getByLabel('Organization name').fill(organization);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  // No session from the sign-up itself (a taken address is answered alike): the page says to check the mail, then sign in.
  await expect(page.getByRole('heading', { name: 'Check your mail' })).toBeVisible();
  await expect(page.getByRole('status')).toContainText(email);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeHidden();
  await page.goto('/console/playground');
  await expect(page.getByRole('heading', { name: 'Playground' })).toBeVisible();
  return { email, password, organization };
}

/** The console's API from the page's own context (its cookies), with the session's CSRF token on writes. */
export async function consoleApi(page: Page, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) {
  const session = await page.request.get('/console/api/session');
  const { csrfToken } = ((await session.json()) as { data: { csrfToken: string } }).data;
  return page.request.fetch(`/console/api${path}`, {
    method,
    headers: method === 'GET' ? {} : { 'x-csrf-token': csrfToken },
    data: body,
  });
}

/** The newest link mailed to `to`, read from the development mailbox of the embedded default. */
export async function mailedLink(page: Page, to: string, subject: RegExp): Promise<string> {
  let link: string | null | undefined;
  await expect
    .poll(
      async () => {
        const response = await page.request.get('/console/api/dev/mailbox');
        const messages = ((await response.json()) as { data: { to: string; subject: string; link: string | null }[] }).data;
        link = messages.find((message) => message.to === to && subject.test(message.subject))?.link;
        return link ?? null;
      },
      { message: `a mail to ${to} matching ${subject}`, timeout: 15_000 },
    )
    .not.toBeNull();
  return link!;
}

/** Follows a mailed link in the page: the link's path, on the service the tests run against. */
export async function openLink(page: Page, link: string): Promise<void> {
  const url = new URL(link);
  await page.goto(`${url.pathname}${url.search}`);
}

/**
 * The read models follow the event log a moment later: look, and reload until the page shows what
 * was just done. Each look may wait `lookMs` for the page (a reload on a busy machine takes seconds).
 */
export async function eventually(page: Page, check: () => Promise<void>): Promise<void> {
  let first = true;
  await expect(async () => {
    if (!first) await page.reload();
    first = false;
    await check();
  }).toPass({ timeout: 40_000, intervals: [500, 1_000, 2_000] });
}

/** Invites `role` from the owner's team page and accepts the invitation in a browser context of its own. */
export async function invite(owner: Page, browser: Browser, role: 'developer' | 'finance'): Promise<Page> {
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
