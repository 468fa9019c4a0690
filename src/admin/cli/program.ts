import { Command } from 'commander';
import type { SetJob } from './kit.js';
import { addKeyCommands } from './key.commands.js';
import { addMasterKeyCommands } from './master-key.commands.js';
import { addOrgCommands } from './org.commands.js';
import { addProviderCommands } from './provider.commands.js';
import { addWalletCommands } from './wallet.commands.js';

/** The command line: each group adds its commands; the chosen command's action hands its job to `setJob`. */
export function buildProgram(setJob: SetJob): Command {
  const program = new Command('admin')
    .description('Operate the verification ledger: organizations, scopes, prices, keys and wallets.')
    .option('--json', 'print the result as JSON')
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });
  addOrgCommands(program, setJob);
  addProviderCommands(program, setJob);
  addKeyCommands(program, setJob);
  addWalletCommands(program, setJob);
  addMasterKeyCommands(program, setJob);
  return program;
}
