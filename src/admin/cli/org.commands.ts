import type { Command } from 'commander';
import { CLI_CONTEXT, NO_WAIT, type SetJob, UsageError } from './kit.js';

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

/** `org …`: register, read, list, approve, suspend, reinstate; scopes, prices and rate limit. */
export function addOrgCommands(program: Command, setJob: SetJob): void {
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
}
