import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from './node-flags.js';

/** Every place that starts the service in production starts it with SERVICE_NODE_FLAGS, in order. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the service’s node flags', () => {
  it('npm start runs the service with them', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start;
    expect(start).toContain(`node ${SERVICE_NODE_FLAGS.join(' ')} dist/src/main.js`);
  });

  it('the image’s CMD runs the service with them', () => {
    const cmd = read('Dockerfile')
      .split('\n')
      .find((line) => line.startsWith('CMD '));
    expect(cmd).toBe(`CMD ${JSON.stringify(['node', ...SERVICE_NODE_FLAGS, 'dist/src/main.js']).replaceAll(',', ', ')}`);
  });

  it('docker-compose’s api service runs it with them', () => {
    const commands = read('docker-compose.yml')
      .split('\n')
      .filter((line) => line.includes('dist/src/main.js'));
    expect(commands).toEqual([`    command: ${JSON.stringify(['node', ...SERVICE_NODE_FLAGS, 'dist/src/main.js']).replaceAll(',', ', ')}`]);
  });

  it('are flags this node accepts, and keep the young generation at 16 MiB or more from the start', () => {
    const newSpace = execFileSync(process.execPath, [
      ...SERVICE_NODE_FLAGS,
      '-e',
      `process.stdout.write(String(require('v8').getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size))`,
    ]).toString();
    expect(Number(newSpace)).toBeGreaterThanOrEqual(16 * 1024 * 1024);
  });
});
