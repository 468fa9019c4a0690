import { Command, Query } from '@nestjs/cqrs';
import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import type { CommandContext } from '../common/event.js';
import type { VerificationSummary, VerificationView } from './verification.views.js';

/** POST /v1/{scope}: one new check. `linkBase` is the origin portrait links are built on when none is configured. */
export class RunVerification extends Command<VerificationView> {
  constructor(
    readonly key: AuthenticatedKey,
    readonly scope: unknown,
    readonly body: unknown,
    readonly context: CommandContext,
    readonly linkBase: string,
  ) {
    super();
  }
}

export class GetVerification extends Query<VerificationView> {
  constructor(readonly key: AuthenticatedKey, readonly reference: string, readonly linkBase: string) {
    super();
  }
}

export interface VerificationPage {
  readonly data: VerificationSummary[];
  readonly meta: { total: number; page: number; pageSize: number; totalPages: number };
}

export class ListVerifications extends Query<VerificationPage> {
  constructor(readonly key: AuthenticatedKey, readonly query: Readonly<Record<string, unknown>>) {
    super();
  }
}
