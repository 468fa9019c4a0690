import { type Command, Option } from 'commander';
import { ValidationFailed, type FieldError } from '../../common/errors.js';
import { CLI_CONTEXT, environmentOf, type SetJob } from './kit.js';

/** `wallet fund`: the same bounds as the admin API and the wallet itself. */
export function addWalletCommands(program: Command, setJob: SetJob): void {
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
        if (!/^\d{1,13}$/.test(options.amount) || Number(options.amount) < 1 || Number(options.amount) > k.MAX_FUNDING_KOBO) {
          errors.push({ field: 'amount', message: `amount must be an integer number of kobo from 1 to ${k.MAX_FUNDING_KOBO}` });
        }
        if (!k.FUNDING_REFERENCE.test(options.reference)) errors.push({ field: 'reference', message: 'reference must be 1 to 100 letters, digits or . _ : -' });
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
}
