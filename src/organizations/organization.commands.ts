import type { CommandContext } from '../common/event.js';
import type { Environment } from '../common/environment.js';
import type { IssuedApiKeyView, ApiKeyView, OrganizationView } from './organization.views.js';
import { Command } from '@nestjs/cqrs';

export interface Options {
  /**
   * How long the command waits for the organizations and api-keys projections to apply its events
   * before answering, so the next request on any instance sees the change: OPERATOR_CHANGE_WAIT_MS unless
   * given. 0 skips the wait (the CLI and the first run, whose answers come from the stream itself).
   */
  readonly projectionWaitMs?: number;
  /**
   * Told the global position of the organization's last event once the command is written (or
   * found already done), so that a caller that does not wait here (the CLI) can wait for it itself.
   */
  readonly recorded?: (position: bigint) => void;
}

/** What every command on one organization's stream carries beside its own fields. */
export interface OrganizationChange {
  readonly organizationId: string;
  readonly context: CommandContext;
  readonly options: Options;
}

export class RegisterOrganization extends Command<OrganizationView> {
  constructor(
    readonly input: { name: string; email: string },
    readonly context: CommandContext,
    /** `organizationId`: chosen by the caller, so that its retry finds the organization it registered (the console's sign-ups); else a new one. */
    readonly options: Options & { readonly organizationId?: string } = {},
  ) {
    super();
  }
}

export class ApproveOrganization extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

/** From the console: the integrator asks for live access; the operators' approval queue lists it until approved. */
export class RequestLiveAccess extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

export class SuspendOrganization extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly reason: string,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

export class ReinstateOrganization extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

export class SetActiveScopes extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly scopes: readonly string[],
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

export class SetScopePrices extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly pricesKobo: Readonly<Record<string, unknown>>,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

/** The name as the DTO checked it; the decider trims it and writes nothing when it is unchanged. */
export class RenameOrganization extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly name: string,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

/** `requestsPerMinute: null` returns the organization to RATE_LIMIT_PER_MINUTE. Validated by the decider. */
export class SetRateLimit extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly requestsPerMinute: unknown,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

export class IssueApiKey extends Command<IssuedApiKeyView> {
  constructor(
    readonly organizationId: string,
    readonly input: { environment: Environment; name: string | null; scopes: readonly string[] | null },
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

export class RevokeApiKey extends Command<ApiKeyView> {
  constructor(
    readonly keyId: string,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

/** The upstream of one environment as an operator gives it; credentials are plain here and encrypted by the handler. */
export interface ProviderConfigurationInput {
  readonly environment: Environment;
  readonly provider: string;
  readonly credentials: unknown;
  readonly fallback: { readonly provider: string; readonly credentials: unknown } | null;
}

export class ConfigureProvider extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly input: ProviderConfigurationInput,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

/** `retentionDays: null` returns the organization to PERSONAL_DATA_RETENTION_DAYS. Validated by the decider. */
export class SetRetention extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly retentionDays: unknown,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}

/** Offboarding: destroys the organization's keys; every verification of it then reads as erased. */
export class DestroyPersonalData extends Command<OrganizationView> {
  constructor(
    readonly organizationId: string,
    readonly context: CommandContext,
    readonly options: Options = {},
  ) {
    super();
  }
}
