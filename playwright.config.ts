import { defineConfig, devices } from '@playwright/test';

/**
 * The console's browser tests (test/browser/*.browser.ts): Playwright's test runner driving the
 * system's Chromium (Debian's `chromium` package): Playwright's own browser download is not used.
 * scripts/browser-tests.mjs runs them, or skips them saying how to install Chromium.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export default defineConfig({
  testDir: 'test/browser',
  testMatch: '**/*.browser.ts',
  outputDir: 'test-results/browser',
  globalSetup: './test/browser/global-setup.ts',
  // One worker: the tests share one service on a 2-core machine, and the flows are long.
  workers: 1,
  fullyParallel: false,
  // The longest flows visit a dozen pages, each checked by axe and photographed twice, on a shared 2-core machine.
  timeout: 240_000,
  expect: { timeout: 15_000 },
  retries: 0,
  forbidOnly: true,
  reporter: [['list']],
  use: {
    baseURL: process.env.CONSOLE_BASE_URL,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    actionTimeout: 15_000,
    navigationTimeout: 30_000,
  },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        launchOptions: { executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-dev-shm-usage'] },
      },
    },
  ],
});
