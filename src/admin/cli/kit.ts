import { readFileSync } from 'node:fs';
import type { INestApplicationContext } from '@nestjs/common';
import type { CommandContext } from '../../common/event.js';
import { isEnvironment, type Environment } from '../../common/environment.js';
import { ValidationFailed } from '../../common/errors.js';

/** Everything heavy, loaded only once the arguments parsed, so a usage error answers at once. */
export async function loadKit() {
  await import('reflect-metadata');
  // The application's module first, alone: it brings in nearly every module below, so the rest
  // are found loaded. Under jest's ESM loader, where the CLI's tests run it in-process (run.ts), two
  // imports in flight that share a module not yet loaded fail to link.
  const app = await import('../../app.module.js');
  const [
    core,
    cqrs,
    config,
    migrations,
    database,
    validation,
    paging,
    wallets,
    walletRules,
    fundingReference,
    commands,
    dto,
    queries,
    store,
    logging,
    nestLogger,
    pinoModule,
    runtime,
    consoleAccounts,
    consoleAccountEvents,
  ] = await Promise.all([
    import('@nestjs/core'),
    import('@nestjs/cqrs'),
    import('../../config/config.js'),
    import('../../database/data-source.js'),
    import('../../database/resolve-database.js'),
    import('../../common/validation.js'),
    import('../../common/paging.js'),
    import('../../wallets/wallet-ledger.port.js'),
    import('../../wallets/wallet.decider.js'),
    import('../../wallets/funding-reference.js'),
    import('../../organizations/organization.commands.js'),
    import('../../organizations/organization.dto.js'),
    import('../../organizations/organization.queries.js'),
    import('../../organizations/organization.store.js'),
    import('../../logging/logger.js'),
    import('../../logging/nest-logger.js'),
    import('pino'),
    import('../../config/runtime.js'),
    import('../../console-auth/accounts.js'),
    import('../../console-auth/account-events.js'),
  ]);
  return {
    ...core,
    ...cqrs,
    ...app,
    ...config,
    ...migrations,
    ...database,
    ...validation,
    ...paging,
    ...wallets,
    MAX_FUNDING_KOBO: walletRules.MAX_FUNDING_KOBO,
    ...fundingReference,
    ...commands,
    ...dto,
    ...queries,
    ...store,
    ...logging,
    ...nestLogger,
    pino: pinoModule.pino,
    CONFIG: runtime.CONFIG,
    AccountStore: consoleAccounts.AccountStore,
    AccountEvents: consoleAccountEvents.AccountEvents,
  };
}
export type Kit = Awaited<ReturnType<typeof loadKit>>;

export interface Output {
  readonly data: unknown;
  /** What human mode prints instead of `data`, when the raw answer reads badly (a null that means "all"). */
  readonly human?: unknown;
  readonly meta?: Record<string, unknown>;
  /** Printed after the data in human mode only. */
  readonly note?: string;
}

/** What a command does once the arguments parsed and the application context started. */
export type Job = (app: INestApplicationContext, kit: Kit) => Promise<Output>;
/** How a command's action hands its job to the entry point. */
export type SetJob = (job: Job) => void;

/** The environment a run of the CLI reads its configuration from (the process's own, for `npm run admin`). */
export type CliEnv = Readonly<Record<string, string | undefined>>;

/** Wrong arguments: exit code 2, like commander's own usage errors. */
export class UsageError extends Error {}

/** The text of `@path` (a secret kept out of the shell history and the process list); a file that cannot be read is a usage error naming `option`, never echoing its text. */
export function fileArgument(value: string, option: string): string {
  try {
    return readFileSync(value.slice(1), 'utf8');
  } catch {
    throw new UsageError(`${option}: cannot read the file ${value.slice(1)}`);
  }
}

export const CLI_CONTEXT: CommandContext = { correlationId: `cli-${process.pid}-${Date.now()}`, actor: { type: 'operator', id: 'cli' } };
let newestPosition: bigint | null = null;

/** The newest organization-stream position this run's commands wrote or met; null when none. */
export function recordedPosition(): bigint | null {
  return newestPosition;
}

/** Forgets the recorded position: each run of the entry point (run.ts) starts from none. */
export function clearRecordedPosition(): void {
  newestPosition = null;
}

/**
 * Answers come from the stream itself: the read models catch up in the projection workers wherever
 * they run, and the entry point then waits for them to pass `recordedPosition()` (see settle.ts).
 */
export const NO_WAIT = {
  projectionWaitMs: 0,
  recorded: (position: bigint): void => {
    if (newestPosition === null || position > newestPosition) newestPosition = position;
  },
};

/**
 * A list argument, written `nin,bvn` or `nin bvn` alike (the help shows the comma form): every
 * argument is split at commas and blanks, and empty parts are dropped.
 */
export function listArgument(values: string | readonly string[]): string[] {
  return (typeof values === 'string' ? [values] : values).flatMap((value) => value.split(/[\s,]+/)).filter((part) => part !== '');
}

export function environmentOf(value: string): Environment {
  if (!isEnvironment(value)) throw new ValidationFailed([{ field: 'env', message: 'env must be "test" or "live"' }]);
  return value;
}
