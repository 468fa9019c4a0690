import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { generateOpenApiDocument, openApiJson } from './openapi.js';

/**
 * `npm run openapi`: writes the integrators' OpenAPI document to openapi/openapi.json (or the path
 * given) and the console's to openapi/console.json (`--console` and a path: the console's alone
 * there); `--check` exits 1 when a file differs from what the code generates.
 */
const args = process.argv.slice(2);
const check = args.includes('--check');
const consoleOnly = args.includes('--console');
const path = args.find((arg) => !arg.startsWith('--'));
const targets: [string, 'integrators' | 'console'][] = consoleOnly
  ? [[resolve(path ?? 'openapi/console.json'), 'console']]
  : [[resolve(path ?? 'openapi/openapi.json'), 'integrators'], ...(path === undefined ? [[resolve('openapi/console.json'), 'console'] as [string, 'console']] : [])];
for (const [target, which] of targets) await write(target, openApiJson(await generateOpenApiDocument(which)));

async function write(target: string, text: string): Promise<void> {
  if (check) {
    const current = await readFile(target, 'utf8').catch(() => '');
    if (current !== text) {
      process.stderr.write(`${target} is out of date: run npm run openapi\n`);
      process.exit(1);
    }
    process.stdout.write(`${target} is up to date\n`);
  } else {
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, text);
    process.stdout.write(`wrote ${target}\n`);
  }
}
