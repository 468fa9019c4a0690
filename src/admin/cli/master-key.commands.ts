import type { Command } from 'commander';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import type { AppConfig } from '../../config/config.js';
import { CONFIG } from '../../config/runtime.js';
import { PG_POOL } from '../../database/pool.js';
import { DataKeys } from '../../data-protection/data-keys.js';
import { KeyManagement, LocalKeyManagement } from '../../data-protection/key-management.port.js';
import { GENERATED_MASTER_KEY_FILE, parseMasterKey } from '../../data-protection/master-key.js';
import { Pkcs11KeyManagement } from '../../data-protection/pkcs11-key-management.js';
import { rotateMaster } from '../../data-protection/rotate-master.js';
import { IndexKeyRotation } from '../../data-protection/index-key-rotation.js';
import { DEFAULT_RETOKENISE_BATCH, MAX_RETOKENISE_BATCH } from '../../data-protection/rotation-pass.js';
import { Clock } from '../../common/clock.js';
import { ContactKeyRotation } from '../../console-auth/contact-key-rotation.js';
import { CONSOLE_CONTACT_SCOPE, ContactData } from '../../data-protection/contact-data.js';
import { verificationIdentifiers } from '../../verifications/verification-identifiers.js';
import { VerificationStreams } from '../../verifications/verification.stream.js';
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
export function addMasterKeyCommands(program: Command, setJob: SetJob, env: CliEnv, stderr: (text: string) => void = (text) => void process.stderr.write(text)): void {
  const keys = program.command('keys').description('the keys that seal personal data');
  keys
    .command('rotate-master')
    .description(
      `re-wrap every organization key under a new master key (--new-key-file or ${NEW_MASTER_KEY_VARIABLE}; with KEY_MANAGEMENT=pkcs11, a new version made in the token); no event changes; one transaction, safe to repeat`,
    )
    .option('--new-key-file <path>', 'a file holding the new 32-byte key as base64')
    .option('--rewrap-only', 'KEY_MANAGEMENT=pkcs11: make no new version; move what older versions still wrap to the newest')
    .addHelpText(
      'after',
      `
Examples:
  $ npm run admin -- keys rotate-master --new-key-file /secure/new-master.key
  $ ${NEW_MASTER_KEY_VARIABLE}=$(openssl rand -base64 32) npm run admin -- keys rotate-master
  $ KEY_MANAGEMENT=pkcs11 npm run admin -- keys rotate-master       # a new version in the token; no restart
  $ KEY_MANAGEMENT=pkcs11 npm run admin -- keys rotate-master --rewrap-only`,
    )
    .action((options: { newKeyFile?: string; rewrapOnly?: boolean }) => {
      const pkcs11 = (env.KEY_MANAGEMENT ?? '').trim() === 'pkcs11';
      if (!pkcs11 && options.newKeyFile === undefined && (env[NEW_MASTER_KEY_VARIABLE] ?? '').trim() === '') {
        throw new UsageError(`give the new master key with --new-key-file <path> or ${NEW_MASTER_KEY_VARIABLE}`);
      }
      if (pkcs11 && options.newKeyFile !== undefined) throw new UsageError('with KEY_MANAGEMENT=pkcs11 the token makes the new version: give no --new-key-file');
      if (!pkcs11 && options.rewrapOnly === true) throw new UsageError('--rewrap-only is for KEY_MANAGEMENT=pkcs11');
      if (pkcs11) {
        setJob(async (app) => {
          const kms = app.get(KeyManagement);
          if (!(kms instanceof Pkcs11KeyManagement)) throw new UsageError('KEY_MANAGEMENT=pkcs11 is not in force');
          const previous = kms.masterKeyId;
          if (options.rewrapOnly !== true) kms.rotate();
          // The adapter unwraps every version, so it is both sides: all rows move to its newest.
          const report = await rotateMaster(app.get<symbol, pg.Pool>(PG_POOL), kms, kms);
          const config = app.get<symbol, AppConfig>(CONFIG);
          return {
            data: { masterKeyId: kms.masterKeyId, previousMasterKeyId: previous, ...report },
            note: `Running instances take the new version within KMS_PKCS11_REFRESH_MS (${config.dataProtection.pkcs11?.refreshMs ?? 0} ms), with no restart; older versions keep unwrapping. After that, run again with --rewrap-only to move what an instance wrapped under the old version meanwhile.`,
          };
        });
        return;
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
  keys
    .command('rotate-org')
    .description("a new version of an organization's key-encryption key for new data keys (older versions kept to unwrap); also made automatically near ORGANIZATION_KEY_MAX_WRAPS")
    .argument('<organizationId>', 'the organization whose key gets a new version')
    .addHelpText('after', '\nExample:\n  $ npm run admin -- keys rotate-org org_01HX...')
    .action((organizationId: string) => {
      setJob(async (app) => {
        const { version } = await app.get(DataKeys).rotateOrganizationKey(organizationId);
        return { data: { organizationId, version }, note: 'Other instances wrap under the new version once their cached key expires (60 s).' };
      });
    });
  keys
    .command('rotate-index')
    .description(
      "a new version of an organization's blind-index key (or, given console:contacts, of the console's email lookup key), then the pass that re-tokenises its checks (its console accounts) while lookups try both keys, and retires the old version; run it again after a stop to resume",
    )
    .argument('<organizationId>', 'the organization whose index key is rotated, or console:contacts')
    .option('--batch-size <n>', `checks re-tokenised per transaction (1 to ${MAX_RETOKENISE_BATCH})`, String(DEFAULT_RETOKENISE_BATCH))
    .option('--no-progress', 'no progress lines on stderr')
    .addHelpText('after', '\nExample:\n  $ npm run admin -- keys rotate-index org_01HX...')
    .action((organizationId: string, options: { batchSize: string; progress: boolean }) => {
      const batchSize = Number(options.batchSize);
      if (!/^\d{1,4}$/.test(options.batchSize) || batchSize < 1 || batchSize > MAX_RETOKENISE_BATCH)
        throw new UsageError(`--batch-size is a whole number from 1 to ${MAX_RETOKENISE_BATCH}`);
      setJob(async (app) => {
        const keys = app.get(DataKeys);
        const { version, started } = await keys.rotateIndexKey(organizationId, app.get(Clock).now());
        const pool = app.get<symbol, pg.Pool>(PG_POOL);
        const contacts = organizationId === CONSOLE_CONTACT_SCOPE;
        const pass = contacts
          ? { run: (_: string, options: Parameters<ContactKeyRotation['run']>[0]) => new ContactKeyRotation(pool, keys, app.get(ContactData)).run(options) }
          : new IndexKeyRotation(pool, keys, verificationIdentifiers(app.get(VerificationStreams)));
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        let shownMs = 0;
        try {
          const summary = await pass.run(organizationId, {
            batchSize,
            signal: stop.signal,
            onProgress: ({ done, total }) => {
              if (!options.progress || (Date.now() - shownMs < 2_000 && done < total)) return;
              shownMs = Date.now();
              stderr(`rotate-index: ${done}/${total} ${contacts ? 'console accounts' : 'checks'} re-tokenised under version ${version}\n`);
            },
          });
          return {
            data: { organizationId, started, ...summary },
            note: summary.retired
              ? `Every token is under version ${version}; the old version is destroyed.`
              : 'Stopped before the end: run the command again to resume (lookups try both versions meanwhile).',
          };
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      });
    });
}
