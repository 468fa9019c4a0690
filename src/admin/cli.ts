import { fail } from './cli/output.js';
import { runAdmin } from './cli/run.js';

/**
 * `npm run admin -- <command>`: the admin API's commands for operators without HTTP access,
 * dispatched through the same command handlers. Exit codes: 0 done, 1 refused or failed, 2 usage.
 * The commands are in cli/, one file per group; cli/run.ts is one run, from arguments to exit code.
 */
runAdmin(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(fail(error)),
);
