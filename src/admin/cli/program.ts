import { Command } from 'commander';
import type { CliEnv, SetJob } from './kit.js';
import { addKeyCommands } from './key.commands.js';
import { addMasterKeyCommands } from './master-key.commands.js';
import { addOperatorCommands } from './operator.commands.js';
import { addOrgCommands } from './org.commands.js';
import { addProviderCommands } from './provider.commands.js';
import { addWalletCommands } from './wallet.commands.js';

/** Where the program writes its help and usage errors, and the environment its commands read. */
export interface ProgramIo {
  readonly env: CliEnv;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const PROCESS_IO: ProgramIo = { env: process.env, stdout: (text) => void process.stdout.write(text), stderr: (text) => void process.stderr.write(text) };

/** The command line: each group adds its commands; the chosen command's action hands its job to `setJob`. */
export function buildProgram(setJob: SetJob, io: ProgramIo = PROCESS_IO): Command {
  const program = new Command('admin')
    .description('Operate the verification ledger: organizations, scopes, prices, keys and wallets.')
    .option('--json', 'print the result as JSON (amounts in kobo), for scripts')
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  addOrgCommands(program, setJob);
  addProviderCommands(program, setJob);
  addKeyCommands(program, setJob);
  addWalletCommands(program, setJob);
  addMasterKeyCommands(program, setJob, io.env, io.stderr);
  addOperatorCommands(program, setJob);
  program.addHelpText(
    'after',
    `
Lists are comma-separated everywhere (nin,bvn); spaces between items are accepted too.
Run "npm run admin -- <command> <subcommand> --help" for each command's options and examples.

Examples:
  $ npm run admin -- org create --name 'Acme Ltd' --email ops@acme.ng
  $ npm run admin -- org approve org_01J…
  $ npm run admin -- org scopes org_01J… nin,bvn
  $ npm run admin -- key issue org_01J… --env live --scopes nin,bvn
  $ npm run admin -- wallet fund org_01J… --env live --amount 500000 --reference bank:TRX-2026-0001
  $ npm run admin -- wallet balance org_01J… --env live
  $ npm run admin -- operator create --email ops@ledger.example --role admin

Who may run it: the CLI does not go through the admin API and asks for no token. It talks to the
database (and event store) directly, with the service's own configuration (DATABASE_URL, EVENT_STORE,
…, or the embedded PostgreSQL under DATA_DIR), and records its changes as the operator "cli".
Whoever can read those credentials or DATA_DIR can run it: keep them to operators.
Exit codes: 0 done, 1 refused or failed (the error code on stderr), 2 usage.`,
  );
  return program;
}
