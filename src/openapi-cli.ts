import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { generateOpenApiDocument, openApiJson } from './openapi.js';

/**
 * `npm run openapi`: writes the OpenAPI document to openapi/openapi.json (or the path given);
 * `--check` exits 1 when the file differs from what the code generates.
 */
const args = process.argv.slice(2);
const check = args.includes('--check');
const target = resolve(args.find((arg) => !arg.startsWith('--')) ?? 'openapi/openapi.json');
const text = openApiJson(await generateOpenApiDocument());
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
