import type { Command } from 'commander';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import type { AppConfig } from '../../config/config.js';
import { CONFIG } from '../../config/runtime.js';
import { PG_POOL } from '../../database/pool.js';
import { KeyManagement, LocalKeyManagement } from '../../data-protection/key-management.port.js';
import { GENERATED_MASTER_KEY_FILE, parseMasterKey } from '../../data-protection/master-key.js';
import { rotateMaster } from '../../data-protection/rotate-master.js';
import { UsageError, type CliEnv, type SetJob } from './kit.js';

export const NEW_MASTER_KEY_VARIABLE = 'NEW_DATA_ENCRYPTION_KEY';

/** The new master key: from a file (never from the command line, which `ps` shows) or NEW_DATA_ENCRYPTION_KEY. */
async function newMasterKey(file: string | undefined, env: CliEnv): Promise<Buffer> {
  if (file !== undefined) return parseMasterKey(await readFile(file, 'utf8'), '--new-key-file');
  const value = env[NEW_MASTER_KEY_VARIABLE];
  if (value === undefined || value.trim() === '') throw new UsageError(`give the new master key with --new-key-file <path> or ${NEW_MASTER_KEY_VARIABLE}`);
  return parseMasterKey(value, NEW_MASTER_KEY_VARIABLE);
}

/** `keys rotate-master`: every organization key re-wrapped under a new master key (see docs/data-protection.md). */
export function addMasterKeyCommands(program: Command, setJob: SetJob, env: CliEnv): void {
  const keys = program.command('keys').description('the keys that seal personal data');
  keys
    .command('rotate-master')
    .description(`re-wrap every organization key under a new master key (--new-key-file or ${NEW_MASTER_KEY_VARIABLE}); no event changes; one transaction, safe to repeat`)
    .option('--new-key-file <path>', 'a file holding the new 32-byte key as base64')
    .addHelpText(
      'after',
      `
Examples:
  $ npm run admin -- keys rotate-master --new-key-file /secure/new-master.key
  $ ${NEW_MASTER_KEY_VARIABLE}=$(openssl rand -base64 32) npm run admin -- keys rotate-master`,
    )
    .action((options: { newKeyFile?: string }) => {
      if (options.newKeyFile === undefined && (env[NEW_MASTER_KEY_VARIABLE] ?? '').trim() === '') {
        throw new UsageError(`give the new master key with --new-key-file <path> or ${NEW_MASTER_KEY_VARIABLE}`);
      }
      setJob(async (app) => {
        const next = new LocalKeyManagement(await newMasterKey(options.newKeyFile, env));
        const config = app.get<symbol, AppConfig>(CONFIG);
        const generated = config.dataProtection.masterKey === undefined ? join(config.dataDir, GENERATED_MASTER_KEY_FILE) : undefined;
        // On the embedded default the key is a file: the new one is written beside it first, and
        // replaces it only once every organization key is wrapped under it.
        if (generated !== undefined) await writeFile(`${generated}.next`, (await newMasterKey(options.newKeyFile, env)).toString('base64'), { mode: 0o600 });
        const report = await rotateMaster(app.get<symbol, pg.Pool>(PG_POOL), app.get(KeyManagement), next);
        if (generated !== undefined) await rename(`${generated}.next`, generated);
        return {
          data: { masterKeyId: next.masterKeyId, ...report },
          note:
            generated !== undefined
              ? `The new key replaced ${generated}. Restart the service.`
              : 'Set DATA_ENCRYPTION_KEY to the new key on every instance and restart them; keep the old key until then.',
        };
      });
    });
}
