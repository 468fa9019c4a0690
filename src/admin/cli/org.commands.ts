import type { INestApplicationContext } from '@nestjs/common';
import type { Command } from 'commander';
import type { AppConfig } from '../../config/config.js';
import type { OrganizationView } from '../../organizations/organization.views.js';
import { SCOPES } from '../../scopes/scopes.js';
import { CLI_CONTEXT, type Job, type Kit, listArgument, NO_WAIT, type SetJob, UsageError } from './kit.js';
import { organizationForPeople, organizationJson } from './output.js';

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

type OrganizationAnswer = Awaited<ReturnType<Job>>;

/** An organization's answer in both forms: JSON with each scope's effective price, human with the defaults named. */
function organizationAnswer(app: INestApplicationContext, k: Kit, organization: OrganizationView): OrganizationAnswer {
  const config = app.get<symbol, AppConfig>(k.CONFIG);
  return { data: organizationJson(organization, config), human: organizationForPeople(organization, config) };
}

const example = (...lines: string[]) => `\n${lines.length === 1 ? 'Example' : 'Examples'}:\n${lines.map((line) => `  $ npm run admin -- ${line}`).join('\n')}`;

/** `org …`: register, read, list, approve, suspend, reinstate; scopes, prices, rate limit and retention. */
export function addOrgCommands(program: Command, setJob: SetJob): void {
  const org = program.command('org').description('organizations: register, read, approve, suspend, reinstate; scopes, prices, rate limit, retention');
  org
    .command('create')
    .description('register an organization (pending, default scopes, sandbox credit on its test wallet)')
    .requiredOption('--name <name>', "the organization's name (required)")
    .requiredOption('--email <email>', 'a contact address (required)')
    .addHelpText('after', example("org create --name 'Acme Ltd' --email ops@acme.ng"))
    .action((options: { name: string; email: string }) =>
      setJob(async (app, k) => {
        const input = k.validateBody(k.RegisterOrganizationDto, { name: options.name, email: options.email });
        return organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.RegisterOrganization(input, CLI_CONTEXT, NO_WAIT)));
      }),
    );
  org
    .command('get')
    .argument('<id>', 'the organization id (org_…)')
    .description("show an organization: status, active scopes, each scope's price (default or override), rate limit, providers")
    .addHelpText('after', example('org get org_01J…'))
    .action((id: string) => setJob(async (app, k) => organizationAnswer(app, k, await app.get(k.QueryBus).execute(new k.GetOrganization(id)))));
  org
    .command('list')
    .description('list organizations, most recent first')
    .option('--page <n>', 'the page, from 1', '1')
    .option('--page-size <n>', 'organizations per page, 1 to 100', '20')
    .addHelpText('after', example('org list --page 2 --page-size 50'))
    .action((options: { page: string; pageSize: string }) =>
      setJob(async (app, k) => {
        const { page, pageSize } = k.paging({ page: options.page, pageSize: options.pageSize });
        const result = await app.get(k.QueryBus).execute(new k.ListOrganizations(page, pageSize));
        const answers = result.items.map((item) => organizationAnswer(app, k, item));
        return { data: answers.map((answer) => answer.data), human: answers.map((answer) => answer.human), meta: result.meta };
      }),
    );
  org
    .command('approve')
    .argument('<id>', 'the organization id (org_…)')
    .description('approve an organization: its live keys may then run checks')
    .addHelpText('after', example('org approve org_01J…'))
    .action((id: string) => setJob(async (app, k) => organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.ApproveOrganization(id, CLI_CONTEXT, NO_WAIT)))));
  org
    .command('suspend')
    .argument('<id>', 'the organization id (org_…)')
    .description('suspend an organization: every key of it is refused until it is reinstated')
    .requiredOption('--reason <reason>', 'why, kept in the event log and shown to operators (required)')
    .addHelpText('after', example("org suspend org_01J… --reason 'unpaid invoice 2026-03'"))
    .action((id: string, options: { reason: string }) =>
      setJob(async (app, k) => {
        const input = k.validateBody(k.SuspendOrganizationDto, { reason: options.reason });
        return organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.SuspendOrganization(id, input.reason, CLI_CONTEXT, NO_WAIT)));
      }),
    );
  org
    .command('reinstate')
    .argument('<id>', 'the organization id (org_…)')
    .description('lift a suspension')
    .addHelpText('after', example('org reinstate org_01J…'))
    .action((id: string) => setJob(async (app, k) => organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.ReinstateOrganization(id, CLI_CONTEXT, NO_WAIT)))));
  org
    .command('scopes')
    .argument('<id>', 'the organization id (org_…)')
    .argument('[scopes...]', `the scopes, comma-separated; known: ${SCOPES.join(',')}`)
    .description(`set the active scopes: the full set (none deactivates all)`)
    .addHelpText('after', example('org scopes org_01J… nin,bvn,phone', 'org scopes org_01J…            # deactivate every scope'))
    .action((id: string, scopes: string[]) =>
      setJob(async (app, k) => {
        const input = k.validateBody(k.SetScopesDto, { scopes: listArgument(scopes) });
        return organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.SetActiveScopes(id, input.scopes, CLI_CONTEXT, NO_WAIT)));
      }),
    );
  org
    .command('prices')
    .argument('<id>', 'the organization id (org_…)')
    .argument('[prices...]', 'scope=kobo pairs, comma-separated, e.g. nin=5000,bvn=7500')
    .description('set the per-scope price overrides in kobo as scope=kobo pairs, comma-separated: the full set (scopes left out return to the default; none clears every override)')
    .addHelpText('after', example('org prices org_01J… nin=5000,bvn=7500     # ₦50 and ₦75', 'org prices org_01J…                        # every scope back to its default'))
    .action((id: string, pairs: string[]) =>
      setJob(async (app, k) => organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.SetScopePrices(id, pricePairs(listArgument(pairs)), CLI_CONTEXT, NO_WAIT)))),
    );
  org
    .command('rename')
    .argument('<id>', 'the organization id (org_…)')
    .argument('<name>', 'the new name (1 to 200 characters, not blank); quote it when it has spaces')
    .description('rename the organization: its id, keys, wallets and checks stay as they are')
    .addHelpText('after', example('org rename org_01J… "Acme Lending Holdings Ltd"'))
    .action((id: string, name: string) =>
      setJob(async (app, k) => {
        const input = k.validateBody(k.OrganizationNameDto, { name });
        return organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.RenameOrganization(id, input.name, CLI_CONTEXT, NO_WAIT)));
      }),
    );
  org
    .command('rate-limit')
    .argument('<id>', 'the organization id (org_…)')
    .argument('<requestsPerMinute>', 'a whole number from 1, or "default"')
    .description('set the requests per API key per minute on /v1 for this organization\'s keys; "default" returns to RATE_LIMIT_PER_MINUTE')
    .addHelpText('after', example('org rate-limit org_01J… 120', 'org rate-limit org_01J… default'))
    .action((id: string, value: string) =>
      setJob(async (app, k) => {
        // Not a whole number: passed on as text, for the decider to refuse by name.
        const requestsPerMinute = value === 'default' ? null : /^\d{1,9}$/.test(value) ? Number(value) : value;
        return organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.SetRateLimit(id, requestsPerMinute, CLI_CONTEXT, NO_WAIT)));
      }),
    );
  org
    .command('retention')
    .argument('<id>', 'the organization id (org_…)')
    .argument('<days>', 'a whole number of days from 1, or "default"')
    .description(
      'set how many days the personal data of this organization\'s checks is kept before the retention sweep erases it; "default" returns to PERSONAL_DATA_RETENTION_DAYS',
    )
    .addHelpText('after', example('org retention org_01J… 365', 'org retention org_01J… default'))
    .action((id: string, value: string) =>
      setJob(async (app, k) => {
        // Not a whole number: passed on as text, for the decider to refuse by name.
        const retentionDays = value === 'default' ? null : /^\d{1,9}$/.test(value) ? Number(value) : value;
        return organizationAnswer(app, k, await app.get(k.CommandBus).execute(new k.SetRetention(id, retentionDays, CLI_CONTEXT, NO_WAIT)));
      }),
    );
}
