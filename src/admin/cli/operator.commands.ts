import { type Command, Option } from 'commander';
import { ValidationFailed } from '../../common/errors.js';
import { CLI_CONTEXT, type SetJob } from './kit.js';

/** A set-password link is good for a day: long enough to reach the new operator, short for a credential. */
const SET_PASSWORD_TTL_MS = 24 * 3_600_000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** `operator create`: an account of the operators' console, with a one-time link to set its password. */
export function addOperatorCommands(program: Command, setJob: SetJob): void {
  const operator = program.command('operator').description("accounts of the operators' console at /console/operator");
  operator
    .command('create')
    .description('create an operator account and print a one-time link (valid 24 h) where its owner sets the password; the second factor (TOTP) is set up at first sign-in')
    .requiredOption('--email <email>', "the operator's email address (required)")
    .addOption(new Option('--role <role>', 'admin (everything) or auditor (reads everything, changes nothing)').choices(['admin', 'auditor']).default('admin'))
    .addHelpText('after', '\nExample:\n  $ npm run admin -- operator create --email ops@ledger.example --role admin')
    .action((options: { email: string; role: 'admin' | 'auditor' }) =>
      setJob(async (app, k) => {
        if (options.email.length > 254 || !EMAIL.test(options.email)) throw new ValidationFailed([{ field: 'email', message: 'email must be an email address' }]);
        const accounts = app.get(k.AccountStore, { strict: false });
        const config = app.get<unknown, { port: number; portraits: { publicBaseUrl: string | undefined } }>(k.CONFIG, { strict: false });
        const events = app.get(k.AccountEvents, { strict: false });
        const now = new Date();
        const { user, token } = await events.record(CLI_CONTEXT, async (db) => {
          const user = await accounts.insert(
            { kind: 'operator', organizationId: null, email: options.email, role: options.role, passwordHash: null, emailVerifiedAt: now, createdAt: now },
            db,
          );
          const { token } = await accounts.createToken(
            { purpose: 'reset_password', userId: user.id, kind: 'operator', organizationId: null, email: user.email, role: user.role, now, ttlMs: SET_PASSWORD_TTL_MS },
            db,
          );
          return { value: { user, token }, events: [{ type: 'ConsoleOperatorCreated', data: { schemaVersion: 1, userId: user.id, role: options.role, via: 'cli' } }] };
        });
        const origin = (config.portraits.publicBaseUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, '');
        const link = `${origin}/console/reset-password?token=${encodeURIComponent(token)}`;
        return {
          data: { id: user.id, email: user.email, role: user.role, setPasswordLink: link },
          note: 'Hand the link to the operator only: it sets the password once, within 24 hours. The second factor is set up at first sign-in.',
        };
      }),
    );
}
