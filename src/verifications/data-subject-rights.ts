import { Inject, Injectable } from '@nestjs/common';
import { zipSync } from 'fflate';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { ChangeNotInForce, Conflict, NotFound, ValidationFailed, type FieldError } from '../common/errors.js';
import type { Actor, CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { isoWithOffset } from '../common/time.js';
import { blindToken, normaliseIdentifier, normalisedSubject } from '../data-protection/blind-index.js';
import { DataKeys, OrganizationKeysDestroyed } from '../data-protection/data-keys.js';
import { SubjectIdentifiers } from '../data-protection/subject-identifiers.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { EventSourcedHandler, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../event-sourcing/retry.js';
import { PORTRAIT_ID_FIELD, Portraits } from '../portraits/portraits.service.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { isPlainObject } from '../common/validation.js';
import {
  dataHoldDecider,
  dataRequestDecider,
  type DataHoldCommand,
  type DataHoldState,
  type DataRequestCommand,
  type DataRequestState,
  type HoldOwner,
} from './data-subject.decider.js';
import { dataSubjectStreams, HOLD_REASONS, type DataHoldEvent, type DataRequestEvent, type HoldReason } from './data-subject.events.js';
import { DATA_SUBJECTS_PROJECTION, readHold, readHolds, readHoldsOf, readRequests, readRequestsOfSubject, type HoldRow, type RequestRow } from './data-subject.read-model.js';
import { PersonalDataErasure, type Owner, type SubjectErasure } from './erasure.js';
import { readerSeesScope, type ScopedReader } from './scope-access.js';
import { validateSubject } from './verification-inputs.js';
import { REFERENCE_PATTERN } from './verification.queries.js';
import { VerificationStreams } from './verification.stream.js';
import { verificationView, type VerificationView } from './verification.views.js';

const RETRY = linearJitter(10, 5);
const PAGING = { pageSize: 100, maxPages: 10 };
const ORGANIZATION_ID = /^org_[0-9A-HJKMNP-TV-Z]{26}$/;
export const HOLD_ID = /^hld_[0-9A-HJKMNP-TV-Z]{26}$/;
/** The furthest a hold's end may lie: ten years (longer needs are renewed, or held until lifted). */
const MAX_HOLD_DAYS = 3_660;

/** A data subject as the record shows it: the identifier's kind and its last 3 characters. */
export interface MaskedSubject {
  readonly kind: string;
  readonly maskedIdentifier: string;
}

export interface HoldView {
  readonly id: string;
  readonly environment: string;
  readonly reference: string | null;
  readonly subject: MaskedSubject | null;
  readonly reason: string;
  readonly until: string | null;
  readonly inForce: boolean;
  readonly placedAt: string;
  readonly placedBy: Actor;
  readonly liftedAt: string | null;
  readonly liftedBy: Actor | null;
}

export interface RequestView {
  readonly id: string;
  readonly type: 'export' | 'erasure';
  readonly environment: string;
  readonly subject: MaskedSubject | null;
  readonly references: string[];
  readonly pending: string[];
  readonly format: string | null;
  readonly actor: Actor;
  readonly at: string;
}

export interface OperatorRequestView extends RequestView {
  readonly organizationId: string;
}

export interface SubjectExport {
  readonly exportId: string;
  readonly exportedAt: string;
  readonly subject: MaskedSubject;
  /** The subject's verifications as GET answers them, portrait links included. */
  readonly verifications: VerificationView[];
  /** In the ZIP only: the portrait files beside this document. */
  readonly portraitFiles?: { reference: string; file: string; contentType: string }[];
  readonly holds: HoldView[];
  /** Earlier exports and erasures of this subject. */
  readonly requests: RequestView[];
}

/** `***` and the identifier's last 3 characters (normalised: a phone's forms mask alike). */
export function maskIdentifier(kind: Parameters<typeof normaliseIdentifier>[0], value: string): string {
  return `***${normaliseIdentifier(kind, value).slice(-3)}`;
}

const actor = (type: string | null, id: string | null): Actor | null => (type === null || id === null ? null : { type: type as Actor['type'], id });

function holdView(row: HoldRow, now: Date): HoldView {
  return {
    id: row.id,
    environment: row.environment,
    reference: row.reference,
    subject: row.subject_kind === null || row.masked_identifier === null ? null : { kind: row.subject_kind, maskedIdentifier: row.masked_identifier },
    reason: row.reason,
    until: row.until === null ? null : isoWithOffset(row.until),
    inForce: row.lifted_at === null && (row.until === null || row.until > now),
    placedAt: isoWithOffset(row.placed_at),
    placedBy: actor(row.placed_by_type, row.placed_by_id) as Actor,
    liftedAt: row.lifted_at === null ? null : isoWithOffset(row.lifted_at),
    liftedBy: actor(row.lifted_by_type, row.lifted_by_id),
  };
}

function requestView(row: RequestRow): RequestView {
  return {
    id: row.id,
    type: row.kind,
    environment: row.environment,
    subject: row.subject_kind === null || row.masked_identifier === null ? null : { kind: row.subject_kind, maskedIdentifier: row.masked_identifier },
    references: row.references,
    pending: row.pending,
    format: row.format,
    actor: { type: row.actor_type as Actor['type'], id: row.actor_id },
    at: isoWithOffset(row.at),
  };
}

/** A hold's body: `reference` or `subject` (one identifier, as the data-subject routes take it), `reason`, and `until` if it ends. */
export function validateHold(given: unknown, now: Date): { reference?: string; subject?: unknown; reason: HoldReason; until: Date | null } {
  if (!isPlainObject(given)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object' }]);
  const errors: FieldError[] = [];
  const unknown = Object.keys(given)
    .filter((field) => !['reference', 'subject', 'reason', 'until'].includes(field))
    .slice(0, 20);
  for (const field of unknown) errors.push({ field: field.slice(0, 50), message: 'is not a field of a hold (reference, subject, reason, until)' });
  const { reference, subject, reason, until } = given;
  if ((reference === undefined) === (subject === undefined)) errors.push({ field: 'body', message: 'give exactly one of reference, subject' });
  if (reference !== undefined && (typeof reference !== 'string' || !REFERENCE_PATTERN.test(reference)))
    errors.push({ field: 'reference', message: 'must be a verification reference (vrf_…)' });
  if (typeof reason !== 'string' || !(HOLD_REASONS as readonly string[]).includes(reason)) errors.push({ field: 'reason', message: `must be one of ${HOLD_REASONS.join(', ')}` });
  let end: Date | null = null;
  if (until !== undefined && until !== null) {
    const parsed = typeof until === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:\d\d)$/.test(until) ? new Date(until) : null;
    if (parsed === null || Number.isNaN(parsed.getTime()) || parsed <= now || parsed.getTime() > now.getTime() + MAX_HOLD_DAYS * 86_400_000) {
      errors.push({ field: 'until', message: `must be a date-time after now and within ${MAX_HOLD_DAYS} days, or null` });
    } else end = parsed;
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { ...(reference === undefined ? {} : { reference: reference as string }), ...(subject === undefined ? {} : { subject }), reason: reason as HoldReason, until: end };
}

/**
 * Data subjects' rights beyond erasure: the export of everything held on a subject (right of
 * access), holds that stop erasure and retention (restriction, legal hold), and the record of
 * exports and erasures. Every fact is an event (`dataHold-…`, `dataRequest-…`); the reads come
 * from the `data-subjects` projection, which each write waits for.
 */
@Injectable()
export class DataSubjectRights {
  private readonly identifiers: SubjectIdentifiers;
  private readonly holds: EventSourcedHandler<DataHoldState, DataHoldCommand, DataHoldEvent>;
  private readonly requests: EventSourcedHandler<DataRequestState, DataRequestCommand, DataRequestEvent>;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(PersonalDataErasure) private readonly erasure: PersonalDataErasure,
    @Inject(VerificationStreams) private readonly streams: VerificationStreams,
    @Inject(Portraits) private readonly portraits: Portraits,
  ) {
    this.identifiers = new SubjectIdentifiers(pool, keys);
    this.holds = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
    this.requests = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
  }

  private newId(prefix: string): string {
    return `${prefix}_${this.ids.reference().slice('vrf_'.length)}`;
  }

  /**
   * The subject in `body`, masked, and its blind-index token under the current index key (null
   * once the organization was offboarded), which is what is recorded; `tokens` adds the one under
   * the key a rotation is retiring, for lookups.
   */
  private async subjectOf(owner: Owner, body: unknown): Promise<MaskedSubject & { token: string | null; tokens: string[] }> {
    const { kind, value, bank } = validateSubject(body);
    const masked = { kind, maskedIdentifier: maskIdentifier(kind, value) };
    try {
      const tokens = await this.keys.subjectTokens(owner.organizationId, (indexKey) => blindToken(indexKey, kind, value, bank));
      // Recorded with a hold or a request (the callers): kept sealed, so an index-key rotation re-tokenises it.
      if (tokens[0] !== undefined) await this.identifiers.remember(owner.organizationId, tokens[0], normalisedSubject(kind, value, bank));
      return { ...masked, token: tokens[0] ?? null, tokens };
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed) return { ...masked, token: null, tokens: [] };
      throw error;
    }
  }

  private async settle(position: bigint): Promise<void> {
    if (!(await this.waiter.waitFor([DATA_SUBJECTS_PROJECTION], position))) {
      throw new ChangeNotInForce('The change is recorded but not yet in force; repeat the request to wait for it', { position: String(position) });
    }
  }

  // ---- holds ---------------------------------------------------------------------------------

  /** Places a hold on one check of `owner` (visible to its key) or on a data subject of `owner`. */
  async placeHold(owner: Owner, body: unknown, context: CommandContext): Promise<HoldView> {
    const now = this.clock.now();
    const input = validateHold(body, now);
    const holdId = this.newId('hld');
    let target: { reference: string | null; subjectKind: string | null; maskedIdentifier: string | null; subjectToken: string | null };
    if (input.reference !== undefined) {
      const state = await this.streams.load(input.reference);
      if (
        state.status === 'none' ||
        state.requested.organizationId !== owner.organizationId ||
        state.requested.environment !== owner.environment ||
        !readerSeesScope(owner, state.requested.scope)
      ) {
        throw new NotFound('No verification with this reference');
      }
      target = { reference: input.reference, subjectKind: null, maskedIdentifier: null, subjectToken: null };
    } else {
      const subject = await this.subjectOf(owner, input.subject);
      if (subject.token === null) throw new NotFound("The organization's personal data was destroyed: nothing is left to hold");
      target = { reference: null, subjectKind: subject.kind, maskedIdentifier: subject.maskedIdentifier, subjectToken: subject.token };
    }
    const handled = await this.holds.handle(
      holdStream(holdId),
      {
        type: 'PlaceHold',
        hold: {
          holdId,
          organizationId: owner.organizationId,
          environment: owner.environment,
          ...target,
          reason: input.reason,
          until: input.until?.toISOString() ?? null,
          placedAt: now.toISOString(),
        },
      },
      context,
    );
    if (handled.status === 'conflict') throw new Conflict('The hold is being changed concurrently; try again');
    if (handled.status === 'appended') await this.settle(handled.position);
    return this.hold(owner, holdId);
  }

  /** Lifts a hold of `owner` (null: an operator, any organization's). Lifting again answers the same. */
  async liftHold(owner: HoldOwner | null, holdId: string, context: CommandContext): Promise<HoldView> {
    if (!HOLD_ID.test(holdId)) throw new NotFound('No hold with that id');
    const handled = await this.holds.handle(holdStream(holdId), { type: 'LiftHold', owner, at: this.clock.now() }, context);
    if (handled.status === 'conflict') throw new Conflict('The hold is being changed concurrently; try again');
    if (handled.status === 'appended') await this.settle(handled.position);
    return this.hold(owner, holdId);
  }

  async hold(owner: HoldOwner | null, holdId: string): Promise<HoldView> {
    const row = HOLD_ID.test(holdId) ? await readHold(this.pool, holdId) : undefined;
    if (row === undefined || (owner !== null && (row.organization_id !== owner.organizationId || row.environment !== owner.environment)))
      throw new NotFound('No hold with that id');
    return holdView(row, this.clock.now());
  }

  /** A page of holds; to a key restricted to some scopes, a hold on a check outside them shows no reference. */
  async listHolds(owner: HoldOwner & ScopedReader, page: number, pageSize: number): Promise<{ data: HoldView[]; total: number }> {
    const { rows, total } = await readHolds(this.pool, owner, page, pageSize);
    const now = this.clock.now();
    const seen = await this.visibleTo(
      owner,
      rows.flatMap((row) => (row.reference === null ? [] : [row.reference])),
    );
    return { data: rows.map((row) => holdView(row.reference === null || seen(row.reference) ? row : { ...row, reference: null }, now)), total };
  }

  /**
   * Which references a reader may name: all for an unrestricted one, else those of checks of its
   * scopes (by the read model, where a check stays after its erasure).
   */
  private async visibleTo(reader: ScopedReader, references: readonly string[]): Promise<(reference: string) => boolean> {
    if (reader.keyScopes === undefined || reader.keyScopes === null || references.length === 0) return () => true;
    const { rows } = await this.pool.query<{ reference: string; scope: string }>('select reference, scope from verifications where reference = any($1::text[])', [references]);
    const visible = new Set(rows.filter((row) => readerSeesScope(reader, row.scope)).map((row) => row.reference));
    return (reference) => visible.has(reference);
  }

  /** Places a hold for an operator: the organization (404 unless it exists) and environment name the owner. */
  async placeHoldFor(organizationId: string, environment: string, body: unknown, context: CommandContext): Promise<HoldView> {
    if (!ORGANIZATION_ID.test(organizationId) || (await this.store.readStream(streams.organization(organizationId), { maxCount: 1 })).length === 0) {
      throw new NotFound('No organization with this id');
    }
    return this.placeHold({ organizationId, environment }, body, context);
  }

  async listAllHolds(page: number, pageSize: number): Promise<{ data: (HoldView & { organizationId: string })[]; total: number }> {
    const { rows, total } = await readHolds(this.pool, null, page, pageSize);
    const now = this.clock.now();
    return { data: rows.map((row) => ({ ...holdView(row, now), organizationId: row.organization_id })), total };
  }

  // ---- erasures, recorded ---------------------------------------------------------------------

  /** Erases one verification (PersonalDataErasure.erase) and records the request. */
  async erase(reference: string, owner: Owner, context: CommandContext): Promise<VerificationView> {
    const view = await this.erasure.erase(reference, owner, context);
    await this.record(
      {
        type: 'RecordErasure',
        data: {
          requestId: this.newId('dsr'),
          organizationId: owner.organizationId,
          environment: owner.environment,
          subjectKind: null,
          maskedIdentifier: null,
          subjectToken: null,
          references: [reference],
          pending: [],
          at: this.clock.now().toISOString(),
        },
      },
      context,
    );
    return view;
  }

  /** Erases a data subject (PersonalDataErasure.eraseSubject) and records the request. */
  async eraseSubject(owner: Owner, body: unknown, context: CommandContext): Promise<SubjectErasure> {
    const subject = await this.subjectOf(owner, body);
    const erased = await this.erasure.eraseSubject(owner, body, context);
    await this.record(
      {
        type: 'RecordErasure',
        data: {
          requestId: this.newId('dsr'),
          organizationId: owner.organizationId,
          environment: owner.environment,
          subjectKind: subject.kind,
          maskedIdentifier: subject.maskedIdentifier,
          subjectToken: subject.token,
          references: erased.references,
          pending: erased.pending,
          at: this.clock.now().toISOString(),
        },
      },
      context,
    );
    return erased;
  }

  /**
   * Records a request already carried out. The record is waited for (a list read next shows it) but
   * never at the request's cost: the erasure or export happened, so a record the read models have
   * not applied within their wait still answers it, and shows in the list once applied.
   */
  private async record(command: DataRequestCommand, context: CommandContext): Promise<void> {
    const handled = await this.requests.handle(requestStream(command.data.requestId), command, context);
    if (handled.status === 'appended') await this.waiter.waitFor([DATA_SUBJECTS_PROJECTION], handled.position);
  }

  /** A page of the record; to a key restricted to some scopes, only the references of checks of its scopes. */
  async listRequests(
    filter: { organizationId?: string; environment?: string },
    page: number,
    pageSize: number,
    reader: ScopedReader = {},
  ): Promise<{ data: OperatorRequestView[]; total: number }> {
    const { rows, total } = await readRequests(this.pool, filter, page, pageSize);
    const seen = await this.visibleTo(
      reader,
      rows.flatMap((row) => [...row.references, ...row.pending]),
    );
    return {
      data: rows.map((row) => ({ ...requestView({ ...row, references: row.references.filter(seen), pending: row.pending.filter(seen) }), organizationId: row.organization_id })),
      total,
    };
  }

  // ---- export ---------------------------------------------------------------------------------

  /**
   * Everything held on a data subject in `owner`'s organization and environment (of the key's
   * scopes only): each verification as GET answers it, the holds, and earlier exports and
   * erasures; with `zip`, the portraits' bytes beside the document. Recorded as an export.
   */
  async export(owner: Owner, body: unknown, format: 'json' | 'zip', context: CommandContext): Promise<{ document: SubjectExport; portraits: Map<string, Uint8Array> }> {
    const subject = await this.subjectOf(owner, body);
    const references = subject.token === null ? [] : await this.erasure.search(owner, body);
    const verifications: VerificationView[] = [];
    const portraitFiles: { reference: string; file: string; contentType: string }[] = [];
    const portraits = new Map<string, Uint8Array>();
    for (const reference of references) {
      const state = await this.streams.load(reference);
      if (
        state.status === 'none' ||
        state.requested.organizationId !== owner.organizationId ||
        state.requested.environment !== owner.environment ||
        !readerSeesScope(owner, state.requested.scope)
      )
        continue;
      const view = verificationView(state);
      verifications.push({ ...view, result: this.portraits.present(view.result) });
      const portraitId = view.result[PORTRAIT_ID_FIELD];
      if (format === 'zip' && typeof portraitId === 'string') {
        const stored = await this.portraits.get(portraitId);
        if (stored !== null) {
          const file = `portraits/${reference}.${stored.contentType === 'image/png' ? 'png' : 'jpg'}`;
          portraits.set(file, new Uint8Array(stored.bytes));
          portraitFiles.push({ reference, file, contentType: stored.contentType });
        }
      }
    }
    const [holds, earlier] = await Promise.all([
      readHoldsOf(this.pool, owner, subject.tokens, references),
      subject.token === null ? Promise.resolve([]) : readRequestsOfSubject(this.pool, owner, subject.tokens),
    ]);
    const now = this.clock.now();
    const exportId = this.newId('dsr');
    await this.record(
      {
        type: 'RecordExport',
        data: {
          requestId: exportId,
          organizationId: owner.organizationId,
          environment: owner.environment,
          subjectKind: subject.kind,
          maskedIdentifier: subject.maskedIdentifier,
          subjectToken: subject.token,
          references: verifications.map((view) => view.reference),
          format,
          at: now.toISOString(),
        },
      },
      context,
    );
    // A key restricted to some scopes sees no reference of a check outside them, here either.
    const visible = new Set(verifications.map((view) => view.reference));
    const restricted = owner.keyScopes !== undefined && owner.keyScopes !== null;
    const shownHolds = restricted ? holds.filter((row) => row.reference === null || visible.has(row.reference)) : holds;
    const shownRequests = earlier
      .map(requestView)
      .map((entry) =>
        restricted
          ? { ...entry, references: entry.references.filter((reference) => visible.has(reference)), pending: entry.pending.filter((reference) => visible.has(reference)) }
          : entry,
      );
    const document: SubjectExport = {
      exportId,
      exportedAt: isoWithOffset(now),
      subject: { kind: subject.kind, maskedIdentifier: subject.maskedIdentifier },
      verifications,
      ...(format === 'zip' ? { portraitFiles } : {}),
      holds: shownHolds.map((row) => holdView(row, now)),
      requests: shownRequests,
    };
    return { document, portraits };
  }
}

/** A ZIP of `export.json` and the portraits (fflate: one small dependency-free library, synchronous and in memory, enough for at most 500 checks). */
export function exportZip(document: SubjectExport, portraits: ReadonlyMap<string, Uint8Array>): Buffer {
  const files: Record<string, Uint8Array> = { 'export.json': new TextEncoder().encode(JSON.stringify(document, null, 2)) };
  for (const [file, bytes] of portraits) files[file] = bytes;
  // Portraits are already compressed: stored as they are.
  return Buffer.from(zipSync(files, { level: 0 }));
}

function holdStream(holdId: string): Stream<DataHoldState, DataHoldCommand, DataHoldEvent> {
  return { id: dataSubjectStreams.hold(holdId), decider: dataHoldDecider };
}

function requestStream(requestId: string): Stream<DataRequestState, DataRequestCommand, DataRequestEvent> {
  return { id: dataSubjectStreams.request(requestId), decider: dataRequestDecider };
}
