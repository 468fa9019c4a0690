import { type Command, Option } from 'commander';
import { ValidationFailed, type FieldError } from '../../common/errors.js';
import type { WalletBalance } from '../../wallets/wallet-ledger.port.js';
import { CLI_CONTEXT, environmentOf, fileArgument, type SetJob, UsageError } from './kit.js';
import { nairaAndKobo } from './output.js';

function balanceForPeople(balance: WalletBalance): Record<string, string> {
  return { balance: nairaAndKobo(balance.balanceKobo), reserved: nairaAndKobo(balance.reservedKobo), available: nairaAndKobo(balance.availableKobo) };
}

/** `wallet fund` and `wallet balance`: the same bounds as the admin API and the wallet itself. */
export function addWalletCommands(program: Command, setJob: SetJob): void {
  const wallet = program.command('wallet').description('wallets, one per organization and environment: fund, balance, top-up limits');
  wallet
    .command('fund')
    .argument('<orgId>', 'the organization id (org_…)')
    .description(
      'credit a wallet once per funding reference: the same reference and amount again credits nothing more; the same reference with another amount is refused (funding_reference_conflict, exit 1)',
    )
    .addOption(new Option('--env <env>', 'the wallet: test (sandbox money) or live (required)').choices(['test', 'live']).makeOptionMandatory())
    .requiredOption('--amount <kobo>', 'the amount in kobo, a whole number (₦1 = 100 kobo) (required)')
    .requiredOption('--reference <reference>', 'the funding reference, e.g. the bank transfer id: 1 to 100 of A-Z a-z 0-9 . _ : - (required)')
    .addHelpText('after', '\nExample (₦5,000):\n  $ npm run admin -- wallet fund org_01J… --env live --amount 500000 --reference bank:TRX-2026-0001')
    .action((orgId: string, options: { env: string; amount: string; reference: string }) =>
      setJob(async (app, k) => {
        const errors: FieldError[] = [];
        if (!/^\d{1,13}$/.test(options.amount) || Number(options.amount) < 1 || Number(options.amount) > k.MAX_FUNDING_KOBO) {
          errors.push({ field: 'amount', message: `amount must be an integer number of kobo from 1 to ${k.MAX_FUNDING_KOBO}` });
        }
        if (!k.FUNDING_REFERENCE.test(options.reference)) errors.push({ field: 'reference', message: k.FUNDING_REFERENCE_MESSAGE });
        if (errors.length > 0) throw new ValidationFailed(errors);
        await app.get(k.OrganizationStore).loadExisting(orgId);
        const ledger = app.get(k.WalletLedger, { strict: false });
        const environment = environmentOf(options.env);
        const amountKobo = Number(options.amount);
        const result = await ledger.fund({ organizationId: orgId, environment }, { fundingReference: options.reference, amountKobo }, CLI_CONTEXT);
        return {
          data: { organizationId: orgId, environment, fundingReference: options.reference, amountKobo, funded: result.funded, ...result.balance },
          human: {
            organizationId: orgId,
            environment,
            fundingReference: options.reference,
            amount: nairaAndKobo(amountKobo),
            funded: result.funded,
            ...balanceForPeople(result.balance),
          },
          note: result.funded ? undefined : 'That funding reference already credited this amount: nothing more was credited.',
        };
      }),
    );
  wallet
    .command('balance')
    .argument('<orgId>', 'the organization id (org_…)')
    .description("show a wallet's balance, reserved (held for checks in flight) and available amounts, from its event stream")
    .addOption(new Option('--env <env>', 'the wallet: test or live (required)').choices(['test', 'live']).makeOptionMandatory())
    .addHelpText('after', '\nExample:\n  $ npm run admin -- wallet balance org_01J… --env live')
    .action((orgId: string, options: { env: string }) =>
      setJob(async (app, k) => {
        await app.get(k.OrganizationStore).loadExisting(orgId);
        const environment = environmentOf(options.env);
        const balance = await app.get(k.WalletLedger, { strict: false }).balance({ organizationId: orgId, environment });
        return { data: { organizationId: orgId, environment, ...balance }, human: { organizationId: orgId, environment, ...balanceForPeople(balance) } };
      }),
    );
  wallet
    .command('limits')
    .argument('<orgId>', 'the organization id (org_…)')
    .description(
      "show an organization's top-up limits (per top-up and per Lagos day, both wallets); --max / --daily set its own, recorded as an event ('default': the deployment's setting)",
    )
    .option('--max <kobo|default>', 'the largest top-up, in kobo, or default')
    .option('--daily <kobo|default>', 'the most a wallet takes in top-ups per day, in kobo, or default')
    .addHelpText('after', '\nExamples:\n  $ npm run admin -- wallet limits org_01J… --max 100000000 --daily 500000000\n  $ npm run admin -- wallet limits org_01J… --daily default')
    .action((orgId: string, options: { max?: string; daily?: string }) =>
      setJob(async (app, k) => {
        await app.get(k.OrganizationStore).loadExisting(orgId);
        const { TopUps } = await import('../../payments/topups.service.js');
        const topUps = app.get(TopUps, { strict: false });
        const errors: FieldError[] = [];
        const parse = (field: string, text: string | undefined, current: number | null): number | null => {
          if (text === undefined) return current;
          if (text === 'default') return null;
          if (!/^\d{1,16}$/.test(text)) errors.push({ field, message: `${field} must be an integer number of kobo or "default"` });
          return Number(text);
        };
        let limits = await topUps.limits(orgId);
        if (options.max !== undefined || options.daily !== undefined) {
          const own = { maxTopUpKobo: parse('max', options.max, limits.own.maxTopUpKobo), dailyLimitKobo: parse('daily', options.daily, limits.own.dailyLimitKobo) };
          if (errors.length > 0) throw new ValidationFailed(errors);
          limits = await topUps.setLimits(orgId, own, CLI_CONTEXT);
        }
        const human = (kobo: number | null) => (kobo === null ? 'default' : nairaAndKobo(kobo));
        return {
          data: { organizationId: orgId, ...limits },
          human: {
            organizationId: orgId,
            perTopUp: `${nairaAndKobo(limits.minTopUpKobo)} to ${nairaAndKobo(limits.maxTopUpKobo)}`,
            perDay: nairaAndKobo(limits.dailyLimitKobo),
            ownMax: human(limits.own.maxTopUpKobo),
            ownDaily: human(limits.own.dailyLimitKobo),
          },
        };
      }),
    );
  wallet
    .command('paystack-key')
    .description('show the Paystack secret key in force for live top-ups (its source and last four characters, never the key); --key @file sets it, sealed in the log')
    .option('--key <@file>', 'a file holding the secret key (sk_live_… or sk_test_…): kept out of the shell history and the process list')
    .addHelpText('after', '\nExamples:\n  $ npm run admin -- wallet paystack-key\n  $ npm run admin -- wallet paystack-key --key @/run/secrets/paystack')
    .action((options: { key?: string }) => {
      if (options.key !== undefined && !options.key.startsWith('@')) throw new UsageError('--key takes @file: a key on the command line would be seen in the process list');
      const secretKey = options.key === undefined ? undefined : fileArgument(options.key, '--key').trim();
      setJob(async (app) => {
        const { TopUps } = await import('../../payments/topups.service.js');
        const { paystackKeyOf } = await import('../../payments/paystack-key.js');
        const keys = app.get(TopUps, { strict: false }).paystackKey;
        return { data: secretKey === undefined ? await keys.view() : await keys.set(paystackKeyOf({ secretKey }), CLI_CONTEXT) };
      });
    });
}
