import { type Command, Option } from 'commander';
import { CLI_CONTEXT, listArgument, NO_WAIT, type SetJob } from './kit.js';
import { keysForPeople } from './output.js';

/** `key …`: issue (printed once), list, revoke. */
export function addKeyCommands(program: Command, setJob: SetJob): void {
  const key = program.command('key').description('API keys: issue (the key is shown once), list, revoke');
  key
    .command('issue')
    .argument('<orgId>', 'the organization id (org_…)')
    .description('issue an API key; the full key is printed this once only (the service keeps its hash)')
    .addOption(new Option('--env <env>', 'the environment the key works in (required)').choices(['test', 'live']).makeOptionMandatory())
    .option('--name <name>', 'a label for the key, e.g. the system that uses it')
    .option('--scopes <scopes...>', 'the scopes the key may call, comma-separated (e.g. nin,bvn); default: every scope active for the organization, now and later')
    .addHelpText(
      'after',
      `
Examples:
  $ npm run admin -- key issue org_01J… --env test
  $ npm run admin -- key issue org_01J… --env live --name billing --scopes nin,bvn`,
    )
    .action((orgId: string, options: { env: string; name?: string; scopes?: string[] }) =>
      setJob(async (app, k) => {
        const body: Record<string, unknown> = { environment: options.env };
        if (options.name !== undefined) body.name = options.name;
        if (options.scopes !== undefined) body.scopes = listArgument(options.scopes);
        const input = k.validateBody(k.IssueApiKeyDto, body);
        const issued = await app
          .get(k.CommandBus)
          .execute(new k.IssueApiKey(orgId, { environment: input.environment, name: input.name ?? null, scopes: input.scopes ?? null }, CLI_CONTEXT, NO_WAIT));
        return { data: issued, human: keysForPeople(issued), note: 'The key is shown this once only: the service keeps its hash.' };
      }),
    );
  key
    .command('list')
    .argument('<orgId>', 'the organization id (org_…)')
    .description("list an organization's keys (prefix and last 4 characters, never the key)")
    .addHelpText('after', '\nExample:\n  $ npm run admin -- key list org_01J…')
    .action((orgId: string) =>
      setJob(async (app, k) => {
        const keys = await app.get(k.QueryBus).execute(new k.ListApiKeys(orgId));
        return { data: keys, human: keys.map(keysForPeople) };
      }),
    );
  key
    .command('revoke')
    .argument('<keyId>', 'the key id (key_…), as `key list` shows it')
    .description('revoke a key; it stops working once the api-keys projection applies the revocation (normally milliseconds)')
    .addHelpText('after', '\nExample:\n  $ npm run admin -- key revoke key_01J…')
    .action((keyId: string) =>
      setJob(async (app, k) => {
        const revoked = await app.get(k.CommandBus).execute(new k.RevokeApiKey(keyId, CLI_CONTEXT, NO_WAIT));
        return { data: revoked, human: keysForPeople(revoked) };
      }),
    );
}
