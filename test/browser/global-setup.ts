import { execFileSync } from 'node:child_process';
import { startService } from './server.js';

/** Builds the service and the console, starts one service for the whole run, and stops it after. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const service = await startService();
  process.env.CONSOLE_BASE_URL = service.baseUrl;
  process.env.CONSOLE_DATA_DIR = service.dataDir;
  return () => service.stop();
}
