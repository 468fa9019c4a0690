// The console's browser tests (Playwright's runner, test/browser/), run by `npm test` after jest.
// They drive the system's Chromium (Debian's `chromium` package, or CHROMIUM_PATH): Playwright's
// own browser download is not used. Without Chromium they are skipped, saying how to get it.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
try {
  accessSync(chromium, constants.X_OK);
} catch {
  process.stdout.write(
    `\nbrowser tests: skipped, no Chromium at ${chromium}. Install it (Debian or Ubuntu: \`sudo apt-get install chromium\`) ` +
      'or set CHROMIUM_PATH to a Chromium or Chrome binary, then run `npm run test:browser`.\n',
  );
  process.exit(0);
}
const result = spawnSync(process.execPath, ['node_modules/@playwright/test/cli.js', 'test', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
