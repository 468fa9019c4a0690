import { Command, Query } from '@nestjs/cqrs';
import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import type { CommandContext } from '../common/event.js';
import type { ScopedReader } from './scope-access.js';
import type { VerificationSummary, VerificationView } from './verification.views.js';

/** POST /v1/{scope}: one new check. */
export class RunVerification extends Command<VerificationView> {
  constructor(
    readonly key: AuthenticatedKey,
    readonly scope: unknown,
    readonly body: unknown,
    readonly context: CommandContext,
  ) {
    super();
  }
}

/**
 * Whose checks a read may see: an API key's organization and environment (the console's pages pass
 * theirs), and, for a key restricted to some scopes, only checks of those scopes.
 */
export type VerificationOwner = Pick<AuthenticatedKey, 'organizationId' | 'environment'> & ScopedReader;

export class GetVerification extends Query<VerificationView> {
  constructor(
    readonly key: VerificationOwner,
    readonly reference: string,
  ) {
    super();
  }
}

export interface VerificationPage {
  readonly data: VerificationSummary[];
  readonly meta: { total: number; page: number; pageSize: number; totalPages: number };
}

export class ListVerifications extends Query<VerificationPage> {
  constructor(
    readonly key: VerificationOwner,
    readonly query: Readonly<Record<string, unknown>>,
  ) {
    super();
  }
}
