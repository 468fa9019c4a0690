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
  // Two workers share the one service: each test signs up an organization of its own, and the
  // operators' console (one first operator) is used by operator.browser.ts alone, whose tests run in
  // one worker, in order. The run waits on the service and the pages more than it computes: on a
  // 2-core machine it took 153 s with two workers against 215 s with one (load 7 to 10).
  workers: 2,
  fullyParallel: false,
  // The longest flows visit a dozen pages, each checked by axe and photographed twice, on a shared 2-core machine.
  timeout: 240_000,
  expect: { timeout: 15_000 },
  retries: 0,
  forbidOnly: true,
  reporter: [['list']],
  use: {
    baseURL: process.env.CONSOLE_BASE_URL,
    // A failed test keeps its trace: actions, network, console and a DOM snapshot at each step.
    // Without the trace's screencast (`screenshots`): Chromium encoded a frame of every repaint of
    // every test, and the run spent 100 to 130 s more of Chromium's CPU and 30 s more of the runner's
    // with it (14 tests, 2-core machine): a tenth of `npm test`'s CPU, where the run is CPU-bound.
    trace: { mode: 'retain-on-failure', screenshots: false },
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
