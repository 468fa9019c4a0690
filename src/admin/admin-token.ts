import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/**
 * The embedded default's admin token: generated on first run, kept under the data directory
 * (mode 600), reused after. Never used when ADMIN_TOKEN is configured or outside the embedded default.
 */
export async function embeddedAdminToken(dataDir: string): Promise<{ token: string; created: boolean }> {
  const file = join(dataDir, 'admin-token');
  if (existsSync(file)) return { token: (await readFile(file, 'utf8')).trim(), created: false };
  await mkdir(dataDir, { recursive: true });
  const token = `admin_${randomBytes(32).toString('base64url')}`;
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return { token, created: true };
}
