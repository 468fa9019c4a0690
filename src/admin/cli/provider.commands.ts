import { type Command, Option } from 'commander';
import { CLI_CONTEXT, fileArgument, NO_WAIT, type SetJob, UsageError } from './kit.js';

/**
 * `--credentials '{"appId": …}'` or `--credentials @path/to/file.json`. The file form keeps secrets
 * out of the shell history and the process list. Never echoes the value.
 */
function credentialsArgument(value: string | undefined, option: string): unknown {
  if (value === undefined) return undefined;
  const text = value.startsWith('@') ? fileArgument(value, option) : value;
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${option} must be a JSON object, or @file holding one`);
  }
}

/** `provider set`: an environment's upstream and its fallback. */
export function addProviderCommands(program: Command, setJob: SetJob): void {
  const provider = program.command('provider').description('upstream identity providers per environment');
  provider
    .command('set')
    .argument('<orgId>', 'the organization id (org_…)')
    .description('configure the upstream of an environment (credentials are stored encrypted and never shown again)')
    .addOption(new Option('--env <env>', 'the environment whose checks go to this upstream (required)').choices(['test', 'live']).makeOptionMandatory())
    .requiredOption('--provider <name>', 'sandbox, dojah or prembly (required)')
    .option(
      '--credentials <json|@file>',
      'the upstream\'s credentials as JSON, or @file holding them (keeps them out of shell history); dojah: {"appId","secretKey"}; prembly: {"appId","apiKey"}; none for sandbox',
    )
    .option('--fallback <name>', 'a secondary upstream to fail over to')
    .option('--fallback-credentials <json|@file>', "the secondary upstream's credentials, as for --credentials")
    .addHelpText(
      'after',
      `
Examples:
  $ npm run admin -- provider set org_01J… --env live --provider dojah --credentials @dojah.json
  $ npm run admin -- provider set org_01J… --env live --provider dojah --credentials @dojah.json --fallback prembly --fallback-credentials @prembly.json
  $ npm run admin -- provider set org_01J… --env test --provider sandbox`,
    )
    .action((orgId: string, options: { env: string; provider: string; credentials?: string; fallback?: string; fallbackCredentials?: string }) => {
      const body: Record<string, unknown> = { environment: options.env, provider: options.provider, credentials: credentialsArgument(options.credentials, '--credentials') };
      if (options.fallback !== undefined) body.fallback = { provider: options.fallback, credentials: credentialsArgument(options.fallbackCredentials, '--fallback-credentials') };
      else if (options.fallbackCredentials !== undefined) throw new UsageError('--fallback-credentials needs --fallback');
      setJob(async (app, k) => ({ data: await app.get(k.CommandBus).execute(new k.ConfigureProvider(orgId, k.providerBody(body), CLI_CONTEXT, NO_WAIT)) }));
    });
}
