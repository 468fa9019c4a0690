import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { InvariantViolated, NotFound } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { blindToken } from '../data-protection/blind-index.js';
import { DataKeys, OrganizationKeysDestroyed } from '../data-protection/data-keys.js';
import { Portraits } from '../portraits/portraits.service.js';
import { VerificationPending } from '../common/errors.js';
import { validateSubject } from './verification-inputs.js';
import { VerificationStreams } from './verification.stream.js';
import { verificationView, type VerificationView } from './verification.views.js';

/** Whose verifications a caller may erase: its organization, in its key's environment. */
export interface Owner {
  readonly organizationId: string;
  readonly environment: string;
}

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
@Injectable()
export class PersonalDataErasure {
  constructor(
    @Inject(VerificationStreams) private readonly streams: VerificationStreams,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(Portraits) private readonly portraits: Portraits,
    @Inject(Clock) private readonly clock: Clock,
  ) {}

  /**
   * Erases one verification of `owner`; answers it as erased, built from the erasure itself (the
   * stream's state once the erasure is recorded), never from a read model that may not show it yet.
   */
  async erase(reference: string, owner: Owner, context: CommandContext): Promise<VerificationView> {
    const before = await this.streams.load(reference);
    if (before.status === 'none' || before.requested.organizationId !== owner.organizationId || before.requested.environment !== owner.environment) {
      throw new NotFound('No verification with this reference');
    }
    const after = await this.streams.erase(reference, this.clock.now(), context);
    if (after.status === 'none' || after.personalDataErasedAt === null) throw new InvariantViolated(`the erasure of ${reference} left it readable`);
    // The portrait is named by the result, which can be opened only until the key goes.
    await this.portraits.delete(before.result);
    await this.keys.destroy(owner.organizationId, reference, new Date(after.personalDataErasedAt));
    return verificationView(after);
  }

  /** The references of `owner` whose inputs or results carry the identifier in `body`. */
  async search(owner: Owner, body: unknown): Promise<string[]> {
    const { kind, value, bank } = validateSubject(body);
    let indexKey: Buffer;
    try {
      indexKey = await this.keys.indexKey(owner.organizationId);
    } catch (error) {
      // Offboarded: nothing of the organization can be found any more.
      if (error instanceof OrganizationKeysDestroyed) return [];
      throw error;
    }
    const token = blindToken(indexKey, kind, value, bank);
    indexKey.fill(0);
    return this.keys.referencesOf(owner.organizationId, owner.environment, [token], MAX_SUBJECT_REFERENCES);
  }

  /** Erases every verification of `owner` that the identifier in `body` finds. */
  async eraseSubject(owner: Owner, body: unknown, context: CommandContext): Promise<SubjectErasure> {
    const references: string[] = [];
    const pending: string[] = [];
    for (const reference of await this.search(owner, body)) {
      try {
        await this.erase(reference, owner, context);
        references.push(reference);
      } catch (error) {
        if (error instanceof VerificationPending) pending.push(reference);
        else if (!(error instanceof NotFound)) throw error;
      }
    }
    return { references, pending };
  }
}
