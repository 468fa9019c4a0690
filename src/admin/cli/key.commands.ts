import { type Command, Option } from 'commander';
import { CLI_CONTEXT, NO_WAIT, type SetJob } from './kit.js';

function list(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** `key …`: issue (printed once), list, revoke. */
export function addKeyCommands(program: Command, setJob: SetJob): void {
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
}
