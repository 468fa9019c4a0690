import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { InvariantViolated, NotFound } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { blindToken } from '../data-protection/blind-index.js';
import { DataKeys, OrganizationKeysDestroyed } from '../data-protection/data-keys.js';
import { PG_POOL } from '../database/pool.js';
import { prepared } from '../database/prepared.js';
import { Portraits } from '../portraits/portraits.service.js';
import { HoldInForce, VerificationPending } from '../common/errors.js';
import { holdInForce, type HoldRow } from './data-subject.read-model.js';
import { readerSeesScope, type ScopedReader } from './scope-access.js';
import { validateSubject } from './verification-inputs.js';
import { VerificationStreams } from './verification.stream.js';
import { verificationView, type VerificationView } from './verification.views.js';

/** Whose verifications a caller may erase: its organization, in its key's environment (of its scopes, for a restricted key). */
export interface Owner extends ScopedReader {
  readonly organizationId: string;
  readonly environment: string;
}

/**
 * A data subject's references among the checks of some scopes only. A check not yet in the read
 * model (v.scope null) is kept here and its scope read from its stream.
 */
const SCOPED_SUBJECT_REFERENCES = `select distinct s.reference, v.scope from verification_subjects s left join verifications v on v.reference = s.reference
  where s.organization_id = $1 and s.environment = $2 and s.token = any($3::text[]) and (v.scope is null or v.scope = any($4::text[]))
  order by s.reference limit $5`;

/** References one data-subject call finds or erases at most; a larger subject is erased over several calls (erased ones leave the index). */
export const MAX_SUBJECT_REFERENCES = 500;

export interface SubjectErasure {
  /** Erased by this call, or before it and still indexed. */
  readonly references: string[];
  /** Still running: not erased (erase them again once finished). */
  readonly pending: string[];
}

/**
 * Erases personal data by destroying keys (src/data-protection): one verification's data key and
 * portrait, or all of a data subject's verifications. Each erasure is first recorded as
 * VerificationPersonalDataErased on the verification's stream (its actor in the metadata), then
 * carried out; both steps are idempotent, so a retry after a crash between them completes it.
 */
/** Personal data of another feature that goes with a data subject's erased checks (a verification session's images). */
export type SubjectErasureFollower = (owner: Owner, references: readonly string[], context: CommandContext) => Promise<void>;

@Injectable()
export class PersonalDataErasure {
  private readonly followers: SubjectErasureFollower[] = [];

  constructor(
    @Inject(VerificationStreams) private readonly streams: VerificationStreams,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(Portraits) private readonly portraits: Portraits,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
  ) {}

  /**
   * Erases one verification of `owner`; answers it as erased, built from the erasure itself (the
   * stream's state once the erasure is recorded), never from a read model that may not show it yet.
   */
  async erase(reference: string, owner: Owner, context: CommandContext): Promise<VerificationView> {
    const { view, erasedAt } = await this.recordErasure(reference, owner, context);
    await this.keys.destroy(owner.organizationId, reference, erasedAt);
    return view;
  }

  /**
   * An erasure up to its key's destruction, which the caller does next (DataKeys.destroy, or
   * destroyMany for a batch: the retention sweep, one commit for many keys); answers the view and
   * the erasure's time, which the key's row takes.
   */
  async recordErasure(reference: string, owner: Owner, context: CommandContext): Promise<{ view: VerificationView; erasedAt: Date }> {
    const { state: before, erase } = await this.streams.loadToErase(reference);
    if (
      before.status === 'none' ||
      before.requested.organizationId !== owner.organizationId ||
      before.requested.environment !== owner.environment ||
      !readerSeesScope(owner, before.requested.scope)
    ) {
      throw new NotFound('No verification with this reference');
    }
    await this.refuseHeld(owner, [reference], []);
    const after = await erase(this.clock.now(), context);
    if (after.status === 'none' || after.personalDataErasedAt === null) throw new InvariantViolated(`the erasure of ${reference} left it readable`);
    // The portrait is named by the result, which can be opened only until the key goes.
    await this.portraits.delete(before.result);
    return { view: verificationView(after), erasedAt: new Date(after.personalDataErasedAt) };
  }

  /**
   * 409 `legal_hold` when a hold in force (data-subject-rights.ts) covers one of `references` or
   * a subject among `tokens`: nothing is erased until it is lifted or ends.
   */
  private async refuseHeld(owner: Owner, references: readonly string[], tokens: readonly string[]): Promise<void> {
    const hold: HoldRow | undefined = await holdInForce(this.pool, owner, references, tokens, this.clock.now());
    if (hold !== undefined) {
      throw new HoldInForce(`A hold (${hold.reason}) stops this erasure until it is lifted`, {
        holdId: hold.id,
        reason: hold.reason,
        until: hold.until === null ? null : hold.until.toISOString().replace(/Z$/, '+00:00'),
      });
    }
  }

  /**
   * The blind-index tokens of the identifier in `body` (two while a rotation of the index key runs:
   * DataKeys.subjectTokens); none once the organization was offboarded.
   */
  private async subjectTokens(owner: Owner, body: unknown): Promise<string[]> {
    const { kind, value, bank } = validateSubject(body);
    try {
      return await this.keys.subjectTokens(owner.organizationId, (indexKey) => blindToken(indexKey, kind, value, bank));
    } catch (error) {
      // Offboarded: nothing of the organization can be found any more.
      if (error instanceof OrganizationKeysDestroyed) return [];
      throw error;
    }
  }

  /** The references of `owner` whose inputs or results carry the identifier in `body`. */
  async search(owner: Owner, body: unknown): Promise<string[]> {
    const tokens = await this.subjectTokens(owner, body);
    if (tokens.length === 0) return [];
    if (owner.keyScopes === undefined || owner.keyScopes === null) return this.keys.referencesOf(owner.organizationId, owner.environment, tokens, MAX_SUBJECT_REFERENCES);
    // A restricted key finds the subject in checks of its scopes only, filtered before the limit, so
    // that checks of other scopes never hide its own beyond the first page.
    const { rows } = await this.pool.query<{ reference: string; scope: string | null }>(
      prepared(SCOPED_SUBJECT_REFERENCES, [owner.organizationId, owner.environment, tokens, owner.keyScopes, MAX_SUBJECT_REFERENCES]),
    );
    const references: string[] = [];
    for (const row of rows) {
      if (row.scope !== null) references.push(row.reference);
      else {
        const state = await this.streams.load(row.reference);
        if (state.status !== 'none' && readerSeesScope(owner, state.requested.scope)) references.push(row.reference);
      }
    }
    return references;
  }

  /** Erases every verification of `owner` that the identifier in `body` finds. */
  async eraseSubject(owner: Owner, body: unknown, context: CommandContext): Promise<SubjectErasure> {
    const references: string[] = [];
    const pending: string[] = [];
    const found = await this.search(owner, body);
    // A hold on the subject, or on any of its checks, stops the whole erasure: none is erased.
    await this.refuseHeld(owner, found, await this.subjectTokens(owner, body));
    for (const reference of found) {
      try {
        await this.erase(reference, owner, context);
        references.push(reference);
      } catch (error) {
        if (error instanceof VerificationPending) pending.push(reference);
        else if (!(error instanceof NotFound)) throw error;
      }
    }
    for (const follow of this.followers) await follow(owner, references, context);
    return { references, pending };
  }

  /** Registers what else a data subject's erasure erases, given the checks it erased (a feature that keeps personal data beside them). */
  follow(follower: SubjectErasureFollower): void {
    this.followers.push(follower);
  }
}
