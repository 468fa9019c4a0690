import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import type { INestApplicationContext } from '@nestjs/common';
import type { Runtime } from '../config/runtime.js';
import { ConfigError } from '../config/config.js';
import { AppError, ValidationFailed, type FieldError } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { isEnvironment, type Environment } from '../common/environment.js';

/** Everything heavy, loaded only once the arguments parsed, so a usage error answers at once. */
async function loadKit() {
  await import('reflect-metadata');
  const [core, cqrs, app, config, migrations, database, validation, wallets, commands, dto, queries, store, logging, nestLogger, pinoModule] = await Promise.all([
    import('@nestjs/core'),
    import('@nestjs/cqrs'),
    import('../app.module.js'),
    import('../config/config.js'),
    import('../database/data-source.js'),
    import('../database/resolve-database.js'),
    import('../common/validation.js'),
    import('../wallets/wallet-ledger.port.js'),
    import('../organizations/organization.commands.js'),
    import('../organizations/organization.dto.js'),
    import('../organizations/organization.queries.js'),
    import('../organizations/organization.store.js'),
    import('../logging/logger.js'),
    import('../logging/nest-logger.js'),
    import('pino'),
  ]);
  return {
    ...core,
    ...cqrs,
    ...app,
    ...config,
    ...migrations,
    ...database,
    ...validation,
    ...wallets,
    ...commands,
    ...dto,
    ...queries,
    ...store,
    ...logging,
    ...nestLogger,
    pino: pinoModule.pino,
  };
}
type Kit = Awaited<ReturnType<typeof loadKit>>;

/**
 * `npm run admin -- <command>`: the admin API's commands for operators without HTTP access,
 * dispatched through the same command handlers. Exit codes: 0 done, 1 refused or failed, 2 usage.
 */

const CLI_CONTEXT: CommandContext = { correlationId: `cli-${process.pid}-${Date.now()}`, actor: { type: 'operator', id: 'cli' } };
/** Answers come from the stream itself; the read models catch up in the projection workers wherever they run. */
const NO_WAIT = { projectionWaitMs: 0 };
const FUNDING_REFERENCE = /^[A-Za-z0-9._:-]{1,100}$/;
const MAX_FUNDING_KOBO = 1_000_000_000_000;

interface Output {
  readonly data: unknown;
  readonly meta?: Record<string, unknown>;
  /** Printed after the data in human mode only. */
  readonly note?: string;
}

type Job = (app: INestApplicationContext, kit: Kit) => Promise<Output>;

class UsageError extends Error {}

function list(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

function environmentOf(value: string): Environment {
  if (!isEnvironment(value)) throw new ValidationFailed([{ field: 'env', message: 'env must be "test" or "live"' }]);
  return value;
}

/** `nin=5000 bvn=7500` → `{nin: 5000, bvn: 7500}`; values that are not whole numbers stay strings, for the decider to refuse by name. */
function pricePairs(pairs: readonly string[]): Record<string, unknown> {
  const prices: Record<string, unknown> = {};
  for (const pair of pairs) {
    const match = /^([^=]+)=(.*)$/.exec(pair);
    if (match === null) throw new UsageError(`expected scope=kobo, got "${pair}"`);
    prices[match[1]] = /^\d{1,12}$/.test(match[2]) ? Number(match[2]) : match[2];
  }
  return prices;
}

/**
 * `--credentials '{"appId": …}'` or `--credentials @path/to/file.json`. The file form keeps secrets
 * out of the shell history and the process list. Never echoes the value.
 */
function credentialsArgument(value: string | undefined, option: string): unknown {
  if (value === undefined) return undefined;
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch {
      throw new UsageError(`${option}: cannot read the file ${value.slice(1)}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${option} must be a JSON object, or @file holding one`);
  }
}

function buildProgram(setJob: (job: Job) => void): Command {
  const program = new Command('admin')
    .description('Operate the verification ledger: organizations, scopes, prices, keys and wallets.')
    .option('--json', 'print the result as JSON')
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });

  const org = program.command('org').description('organizations');
  org
    .command('create')
    .description('register an organization (pending, default scopes, sandbox credit on its test wallet)')
    .requiredOption('--name <name>')
    .requiredOption('--email <email>')
    .action((options: { name: string; email: string }) =>
      setJob(async (app, k) => {
        const input = k.validateBody(k.RegisterOrganizationDto, { name: options.name, email: options.email });
        return { data: await app.get(k.CommandBus).execute(new k.RegisterOrganization(input, CLI_CONTEXT, NO_WAIT)) };
      }),
    );
  org
    .command('get <id>')
    .description('show an organization')
    .action((id: string) => setJob(async (app, k) => ({ data: await app.get(k.QueryBus).execute(new k.GetOrganization(id)) })));
  org
    .command('list')
    .description('list organizations, most recent first')
    .option('--page <n>', 'from 1', '1')
    .option('--page-size <n>', '1 to 100', '20')
    .action((options: { page: string; pageSize: string }) =>
      setJob(async (app, k) => {
        const { page, pageSize } = k.paging({ page: options.page, pageSize: options.pageSize });
        const result = await app.get(k.QueryBus).execute(new k.ListOrganizations(page, pageSize));
        return { data: result.items, meta: result.meta };
      }),
    );
  org
    .command('approve <id>')
    .action((id: string) => setJob(async (app, k) => ({ data: await app.get(k.CommandBus).execute(new k.ApproveOrganization(id, CLI_CONTEXT, NO_WAIT)) })));
  org
    .command('suspend <id>')
    .requiredOption('--reason <reason>')
    .action((id: string, options: { reason: string }) =>
      setJob(async (app, k) => {
        const input = k.validateBody(k.SuspendOrganizationDto, { reason: options.reason });
        return { data: await app.get(k.CommandBus).execute(new k.SuspendOrganization(id, input.reason, CLI_CONTEXT, NO_WAIT)) };
      }),
    );
  org
    .command('reinstate <id>')
    .action((id: string) => setJob(async (app, k) => ({ data: await app.get(k.CommandBus).execute(new k.ReinstateOrganization(id, CLI_CONTEXT, NO_WAIT)) })));
  org
    .command('scopes <id> [scopes...]')
    .description('set the active scopes (the full set; none deactivates all)')
    .action((id: string, scopes: string[]) =>
      setJob(async (app, k) => {
        const input = k.validateBody(k.SetScopesDto, { scopes });
        return { data: await app.get(k.CommandBus).execute(new k.SetActiveScopes(id, input.scopes, CLI_CONTEXT, NO_WAIT)) };
      }),
    );
  org
    .command('prices <id> [prices...]')
    .description('set the per-scope price overrides in kobo, e.g. nin=5000 bvn=7500 (the full set; scopes left out return to the default)')
    .action((id: string, pairs: string[]) =>
      setJob(async (app, k) => ({ data: await app.get(k.CommandBus).execute(new k.SetScopePrices(id, pricePairs(pairs), CLI_CONTEXT, NO_WAIT)) })),
    );

  const provider = program.command('provider').description('upstream providers');
  provider
    .command('set <orgId>')
    .description('configure the upstream of an environment (credentials are stored encrypted and never shown again)')
    .addOption(new Option('--env <env>', 'environment').choices(['test', 'live']).makeOptionMandatory())
    .requiredOption('--provider <name>', 'sandbox, dojah or prembly')
    .option('--credentials <json|@file>', 'dojah: {"appId","secretKey"}; prembly: {"appId","apiKey"}')
    .option('--fallback <name>', 'a secondary upstream to fail over to')
    .option('--fallback-credentials <json|@file>', "the secondary upstream's credentials")
    .action((orgId: string, options: { env: string; provider: string; credentials?: string; fallback?: string; fallbackCredentials?: string }) => {
      const body: Record<string, unknown> = { environment: options.env, provider: options.provider, credentials: credentialsArgument(options.credentials, '--credentials') };
      if (options.fallback !== undefined) body.fallback = { provider: options.fallback, credentials: credentialsArgument(options.fallbackCredentials, '--fallback-credentials') };
      else if (options.fallbackCredentials !== undefined) throw new UsageError('--fallback-credentials needs --fallback');
      setJob(async (app, k) => ({ data: await app.get(k.CommandBus).execute(new k.ConfigureProvider(orgId, k.providerBody(body), CLI_CONTEXT, NO_WAIT)) }));
    });

  org
    .command('rate-limit <id> <requestsPerMinute>')
    .description('set the requests per API key per minute on /v1 for this organization\'s keys; "default" returns to RATE_LIMIT_PER_MINUTE')
    .action((id: string, value: string) =>
      setJob(async (app, k) => {
        // Not a whole number: passed on as text, for the decider to refuse by name.
        const requestsPerMinute = value === 'default' ? null : /^\d{1,9}$/.test(value) ? Number(value) : value;
        return { data: await app.get(k.CommandBus).execute(new k.SetRateLimit(id, requestsPerMinute, CLI_CONTEXT, NO_WAIT)) };
      }),
    );

  const key = program.command('key').description('API keys');
  key
    .command('issue <orgId>')
    .description('issue a key; the full key is printed this once only')
    .addOption(new Option('--env <env>', 'environment').choices(['test', 'live']).makeOptionMandatory())
    .option('--name <name>')
    .option('--scopes <scopes>', 'comma-separated; default every scope active for the organization')
    .action((orgId: string, options: { env: string; name?: string; scopes?: string }) =>
      setJob(async (app, k) => {
        const body: Record<string, unknown> = { environment: options.env };
        if (options.name !== undefined) body.name = options.name;
        if (options.scopes !== undefined) body.scopes = list(options.scopes);
        const input = k.validateBody(k.IssueApiKeyDto, body);
        const issued = await app.get(k.CommandBus).execute(new k.IssueApiKey(orgId, { environment: input.environment, name: input.name ?? null, scopes: input.scopes ?? null }, CLI_CONTEXT, NO_WAIT));
        return { data: issued, note: 'The key is shown this once only: the service keeps its hash.' };
      }),
    );
  key
    .command('list <orgId>')
    .action((orgId: string) => setJob(async (app, k) => ({ data: await app.get(k.QueryBus).execute(new k.ListApiKeys(orgId)) })));
  key
    .command('revoke <keyId>')
    .description('revoke a key; it stops working once the api-keys projection applies the revocation (normally milliseconds)')
    .action((keyId: string) => setJob(async (app, k) => ({ data: await app.get(k.CommandBus).execute(new k.RevokeApiKey(keyId, CLI_CONTEXT, NO_WAIT)) })));

  const wallet = program.command('wallet').description('wallets');
  wallet
    .command('fund <orgId>')
    .description('credit a wallet once per funding reference (repeating a reference credits nothing more)')
    .addOption(new Option('--env <env>', 'environment').choices(['test', 'live']).makeOptionMandatory())
    .requiredOption('--amount <kobo>', 'integer kobo')
    .requiredOption('--reference <reference>', 'funding reference, unique per wallet')
    .action((orgId: string, options: { env: string; amount: string; reference: string }) =>
      setJob(async (app, k) => {
        const errors: FieldError[] = [];
        if (!/^\d{1,13}$/.test(options.amount) || Number(options.amount) < 1 || Number(options.amount) > MAX_FUNDING_KOBO) {
          errors.push({ field: 'amount', message: `amount must be an integer number of kobo from 1 to ${MAX_FUNDING_KOBO}` });
        }
        if (!FUNDING_REFERENCE.test(options.reference)) errors.push({ field: 'reference', message: 'reference must be 1 to 100 letters, digits or . _ : -' });
        if (errors.length > 0) throw new ValidationFailed(errors);
        await app.get(k.OrganizationStore).loadExisting(orgId);
        const ledger = app.get(k.WalletLedger, { strict: false });
        const environment = environmentOf(options.env);
        const result = await ledger.fund({ organizationId: orgId, environment }, { fundingReference: options.reference, amountKobo: Number(options.amount) }, CLI_CONTEXT);
        return {
          data: { organizationId: orgId, environment, fundingReference: options.reference, amountKobo: Number(options.amount), funded: result.funded, ...result.balance },
          note: result.funded ? undefined : 'That funding reference was already used: nothing was credited.',
        };
      }),
    );
  return program;
}

function human(value: unknown, indent = ''): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return `${indent}(none)`;
    if (value.every((item) => typeof item !== 'object' || item === null)) return `${indent}${value.join(', ')}`;
    return value.map((item) => human(item, indent)).join('\n\n');
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value)
      .map(([name, field]) => {
        if (Array.isArray(field)) return `${indent}${name}: ${field.length === 0 ? '(none)' : field.every((item) => typeof item !== 'object') ? field.join(', ') : `\n${human(field, `${indent}  `)}`}`;
        if (typeof field === 'object' && field !== null) return Object.keys(field).length === 0 ? `${indent}${name}: (none)` : `${indent}${name}:\n${human(field, `${indent}  `)}`;
        return `${indent}${name}: ${field === null ? '-' : String(field)}`;
      })
      .join('\n');
  }
  return `${indent}${String(value)}`;
}

function fail(error: unknown): number {
  if (error instanceof AppError) {
    process.stderr.write(`error: ${error.code}: ${error.message}\n`);
    if (error instanceof ValidationFailed) for (const field of error.fields) process.stderr.write(`  ${field.field}: ${field.message}\n`);
    return 1;
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`error: config: ${error.message}\n`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`error: failed: ${message}\n`);
  return 1;
}

async function main(argv: readonly string[]): Promise<number> {
  let job: Job | undefined;
  const program = buildProgram((next) => {
    job = next;
  });
  try {
    program.parse(argv as string[], { from: 'node' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      process.stderr.write(`error: usage: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (job === undefined) {
    program.outputHelp({ error: true });
    return 2;
  }
  const json = program.opts<{ json?: boolean }>().json === true;

  const kit = await loadKit();
  let config;
  try {
    config = kit.loadConfig();
  } catch (error) {
    return fail(error);
  }
  // Logs go to stderr as JSON lines (warnings and errors unless LOG_LEVEL asks for more): stdout is the command's answer.
  const logger = kit.createLogger({ ...config, logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }, kit.pino.destination({ dest: 2, sync: true }));
  const database = await kit.resolveDatabase(config, { log: (line) => logger.info(line) });
  let app: INestApplicationContext | undefined;
  try {
    await kit.runMigrations(database.url);
    // No projection workers and no first-run demo in a one-shot command.
    const runtime: Runtime = { config: { ...config, runProjections: 'false' }, databaseUrl: database.url, embedded: false, adminToken: undefined };
    app = await kit.NestFactory.createApplicationContext(kit.AppModule.forRoot(runtime), { bufferLogs: true, abortOnError: false });
    app.useLogger(new kit.PinoNestLogger(logger));
    await app.init();
    const output = await job(app, kit);
    if (json) {
      process.stdout.write(`${JSON.stringify(output.data, null, 2)}\n`);
    } else {
      process.stdout.write(`${human(output.data)}\n`);
      if (output.meta !== undefined) process.stdout.write(`\n${human(output.meta)}\n`);
      if (output.note !== undefined) process.stdout.write(`\n${output.note}\n`);
    }
    return 0;
  } catch (error) {
    return fail(error);
  } finally {
    await app?.close().catch(() => undefined);
    await database.handle?.stop().catch(() => undefined);
  }
}

main(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(fail(error)),
);
