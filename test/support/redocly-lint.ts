import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

export interface RedoclyReport {
  readonly totals: { errors: number; warnings: number };
  readonly problems: { ruleId: string; message: string }[];
}

/** `redocly lint` with the repository's rules over a document's JSON text, as generated (not the committed copy): its report. */
export async function redoclyLint(json: string, fileName: string): Promise<RedoclyReport> {
  const dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(dir, fileName);
    await writeFile(file, json);
    const cli = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    const result = await run(process.execPath, [cli, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }));
    return JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as RedoclyReport;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
