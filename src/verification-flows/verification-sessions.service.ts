import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { ApiKeyGuard, type AuthenticatedKey } from '../auth/api-key.guard.js';
import { Clock } from '../common/clock.js';
import { AppError, Conflict, Forbidden, NotFound, RateLimited, ServiceUnavailable, Unauthenticated, ValidationFailed } from '../common/errors.js';
import { occurredAt, SYSTEM_ACTOR, type Actor, type CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { open, seal, type SealedEnvelope } from '../data-protection/sealing.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore, type JsonObject } from '../event-store/event-store.port.js';
import { EventSourcedHandler, type Folded, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../event-sourcing/retry.js';
import { type DocumentKind as DocumentImageKind, FaceChecks } from '../face-checks/face-checks.port.js';
import { FACE_MODELS_PATH } from '../face-checks/face-models-static.js';
import { LIVENESS_LIMITS, livenessStep } from '../face-checks/face-measures.js';
import { PublicOrigin } from '../common/public-origin.js';
import { PortraitStore } from '../portraits/portrait.store.js';
import { RequestRateLimiter } from '../rate-limits/request-rate-limiter.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { PersonalDataErasure } from '../verifications/erasure.js';
import { RETENTION_ACTOR } from '../verifications/retention.js';
import { GetVerification, RunVerification } from '../verifications/verification.commands.js';
import type { VerificationView } from '../verifications/verification.views.js';
import { consentText } from './consent-text.js';
import {
  DOCUMENT_SIDES,
  documentKindsOf,
  FACE_MATCH_KINDS,
  IDENTITY_FIELD,
  identityKindsOf,
  type DocumentKind,
  type FlowDefinition,
  type IdentityKind,
} from './flow-definition.js';
import { DOCUMENT_IMAGE, reencodeImage, reencodeSelfie } from './selfie-image.js';
import type { FlowOwner } from './verification-flow.decider.js';
import { VerificationFlows } from './verification-flows.service.js';
import {
  REVIEW_REASONS,
  SessionClosed,
  verificationSessionDecider,
  type ReviewDecision,
  type Reviewer,
  type ReviewReason,
  type FaceMatchOutcome,
  type VerificationSessionCommand,
  type VerificationSessionState,
} from './verification-session.decider.js';
import { SESSION_HISTORY_STEPS, verificationSessionStream, type VerificationSessionCreated, type VerificationSessionEvent } from './verification-session.events.js';
import {
  readLink,
  readSession,
  readSessionAnyOwner,
  readSessions,
  readSessionsInReview,
  sessionsOfChecks,
  VERIFICATION_FLOWS_PROJECTION,
  type SessionRow,
} from './verification-flows.read-model.js';

const RETRY = linearJitter(10, 5);
const PAGING = { pageSize: 100, maxPages: 5 };
export const SESSION_ID = /^vss_[0-9A-HJKMNP-TV-Z]{26}$/;
export const LINK_ID = /^vln_[0-9A-HJKMNP-TV-Z]{26}$/;
const CLIENT_SECRET = /^vcs_[A-Za-z0-9_-]{43}$/;
/** Requests the browser may make on one session a minute: a person needs a few dozen at most. */
export const SESSION_REQUESTS_PER_MINUTE = 60;
const MAX_CUSTOMER_ID = 100;
const MAX_METADATA_BYTES = 2_048;
/** Frames of a liveness step the page may send with a selfie. */
export const MAX_LIVENESS_FRAMES = 6;
export const SESSION_STATUSES = ['created', 'in_progress', 'submitted', 'approved', 'declined', 'needs_review', 'expired', 'cancelled'] as const;
/** What the hosted page does, as the actor of the session's events (the checks it runs are the key's). */
const HOSTED_PAGE: Actor = { type: 'system', id: 'hosted_page' };

type SessionStream = Stream<VerificationSessionState, VerificationSessionCommand, VerificationSessionEvent>;
type Sealed = VerificationSessionCreated['data']['customer'];

function stream(sessionId: string): SessionStream {
  return { id: verificationSessionStream(sessionId), decider: verificationSessionDecider };
}

const iso = (date: Date | null) => (date === null ? null : date.toISOString().replace(/Z$/, '+00:00'));
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** A selfie the server's own face check refused: the problems, never the image. */
export class SelfieRefused extends AppError {
  readonly code = 'selfie_refused';
  readonly httpStatus = 422;
  constructor(readonly problems: readonly string[]) {
    super('The selfie was refused: take it again', { problems });
  }
}

/** A document image the server's own check refused: the problems, never the image. */
export class DocumentRefused extends AppError {
  readonly code = 'document_refused';
  readonly httpStatus = 422;
  constructor(readonly problems: readonly string[]) {
    super('The document photo was refused: take it again', { problems });
  }
}

export interface SessionView {
  readonly id: string;
  readonly environment: string;
  readonly flowId: string;
  readonly flowVersion: number;
  readonly status: string;
  /** Null once the personal data was erased. */
  readonly customerId: string | null;
  readonly metadata: JsonObject | null;
  readonly decision: {
    readonly reasons: string[];
    readonly faceMatchConfidence: number | null;
    /** A person's decision of a session the rule sent to review, or null. */
    readonly review: { readonly decision: string; readonly reason: string; readonly reviewedBy: string; readonly reviewedAt: string } | null;
  } | null;
  /** The liveness step the server saw with the latest selfie (head_turn, blink), or null. */
  readonly liveness: string | null;
  /** The document sides taken and accepted, each once. */
  readonly documents: readonly { readonly document: string; readonly side: string }[];
  /** The ordinary verifications the session ran, by reference. */
  readonly verifications: { readonly identity: string | null; readonly faceMatch: string | null };
  readonly expiresAt: string;
  readonly createdAt: string;
  readonly submittedAt: string | null;
  readonly decidedAt: string | null;
  readonly personalDataErasedAt: string | null;
}

/** One step of a session's history, from its stream: what happened and when (never what the person gave). */
export interface SessionStep {
  readonly step: string;
  readonly at: string;
}

/** What a reviewer sees beside the selfie: the session, its history, and the identity check's record portrait (a signed link), if it has one. */
export interface SessionReview {
  readonly session: SessionView;
  readonly organizationId: string;
  readonly identityKind: string | null;
  readonly history: readonly SessionStep[];
  readonly selfie: boolean;
  readonly portraitUrl: string | null;
  readonly reviewReasons: typeof REVIEW_REASONS;
}

/** One session of the operators' queue: where it is and why it is there, nothing the person gave. */
export interface ReviewQueueItem {
  readonly id: string;
  readonly organizationId: string;
  readonly environment: string;
  readonly flowId: string;
  readonly reasons: string[];
  readonly faceMatchConfidence: number | null;
  readonly decidedAt: string;
}

/** A session's events: a dozen or so (5 selfies, 8 document images and 3 checks at most); the bound only guards. */
const MAX_HISTORY_EVENTS = 100;

/** The body of a review: a decision and a reason of that decision's fixed list, nothing else. */
export function parseReviewInput(body: unknown): { decision: ReviewDecision; reason: ReviewReason } {
  if (!isObject(body)) throw new ValidationFailed([{ field: 'body', message: 'must be a JSON object' }]);
  const { decision, reason, ...rest } = body;
  const errors = Object.keys(rest).map((field) => ({ field, message: 'is not a field of a review' }));
  if (decision !== 'approved' && decision !== 'declined') {
    errors.push({ field: 'decision', message: 'must be approved or declined' });
  } else if (typeof reason !== 'string' || !(REVIEW_REASONS[decision] as readonly string[]).includes(reason)) {
    errors.push({ field: 'reason', message: `must be one of ${REVIEW_REASONS[decision].join(', ')}` });
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { decision: decision as ReviewDecision, reason: reason as ReviewReason };
}

export interface CreatedSessionView extends SessionView {
  /** The page to send the person to; the client secret rides in its fragment, which browsers never send to a server. */
  readonly hostedUrl: string;
  /** Shown this once; it authorises the browser on this session only, until it expires or is decided. */
  readonly clientSecret: string;
}

/** What the hosted page shows: the flow version's branding and steps, and the consent text with its hash. */
export interface Presentation {
  readonly sessionId: string;
  readonly status: string;
  readonly expiresAt: string;
  readonly branding: FlowDefinition['branding'];
  readonly steps: readonly string[];
  readonly identityKinds: readonly IdentityKind[];
  /** The documents the person may choose from, each with the sides to photograph. */
  readonly documents: readonly { readonly document: DocumentKind; readonly sides: readonly string[] }[];
  readonly consent: { readonly textVersion: number; readonly textHash: string; readonly text: string };
  /** Where the page's camera guide loads its face models from (the service's own copy of the library's). */
  readonly faceModelsPath: string;
}

/**
 * Verification sessions: one person's pass through a flow version, on `verificationSession-{id}`.
 * The integrator's key creates, reads and cancels them; the browser acts on one session with its
 * client secret only. Every check a session runs is an ordinary verification, run through the same
 * command as POST /v1/{scope} on the key that created the session (its price, wallet reservation,
 * rate limit and erasure); the session records the references. What the person gives is sealed
 * under the session's own data key; the selfie is a sealed file (the portraits' store) named by id.
 */
@Injectable()
export class VerificationSessions {
  private readonly logger = new Logger('VerificationSessions');
  private readonly handler: EventSourcedHandler<VerificationSessionState, VerificationSessionCommand, VerificationSessionEvent>;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(PublicOrigin) private readonly publicOrigin: PublicOrigin,
    @Inject(VerificationFlows) private readonly flows: VerificationFlows,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(ApiKeyGuard) private readonly apiKeys: ApiKeyGuard,
    @Inject(RequestRateLimiter) private readonly limiter: RequestRateLimiter,
    @Inject(PortraitStore) private readonly files: PortraitStore,
    @Inject(FaceChecks) private readonly faces: FaceChecks,
    @Inject(PersonalDataErasure) private readonly erasure: PersonalDataErasure,
  ) {
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
    // A data subject's erasure reaches the sessions whose identity check it erased: their selfies and document images.
    erasure.follow(async (owner, references, context) => {
      for (const sessionId of await sessionsOfChecks(this.pool, owner, references)) {
        const sessionOwner = { organizationId: owner.organizationId, environment: owner.environment as FlowOwner['environment'] };
        await this.eraseFiles(sessionId, sessionOwner, this.clock.now(), context).catch((error: unknown) => {
          // A session being decided (seconds) cannot be erased yet: the erasure is reported, not failed, and can be asked again.
          if (!(error instanceof Conflict)) throw error;
          this.logger.warn('A data subject erasure met a session being decided; erase it again once decided');
        });
      }
    });
  }

  // The integrator's side (X-Service-Key).

  async create(key: AuthenticatedKey, body: unknown, context: CommandContext): Promise<CreatedSessionView> {
    const owner = ownerOf(key);
    const { flowId, customerId, metadata } = parseSessionInput(body);
    const flow = await this.flows.get(owner, flowId).catch((error: unknown) => {
      if (error instanceof NotFound) throw new ValidationFailed([{ field: 'flowId', message: 'is not a flow of this environment' }]);
      throw error;
    });
    const sessionId = `vss_${this.ids.reference().slice('vrf_'.length)}`;
    const clientSecret = `vcs_${this.ids.secret(32)}`;
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + flow.sessionLifetimeSeconds * 1_000).toISOString();
    const dataKey = await this.keys.create(owner.organizationId, owner.environment, sessionId);
    const customer = sealedValue(dataKey, sessionId, 'VerificationSessionCreated', 'customer', { customerId, metadata });
    const handled = await this.handler.handle(
      stream(sessionId),
      {
        type: 'CreateSession',
        data: {
          sessionId,
          organizationId: owner.organizationId,
          environment: owner.environment,
          flowId,
          flowVersion: flow.version,
          keyId: key.keyId,
          secretHash: sha256(clientSecret).toString('hex'),
          expiresAt,
          steps: flow.steps.map((step) => step.type),
          faceMatchThreshold: flow.decision.faceMatchThreshold,
          reviewMarginPoints: flow.decision.reviewMarginPoints,
          livenessRule: flow.decision.liveness,
          customer,
        },
      },
      context,
    );
    if (handled.status !== 'appended') throw new ServiceUnavailable('The session could not be written; try again');
    await this.waiter.waitFor([VERIFICATION_FLOWS_PROJECTION], handled.position, 5_000);
    const view = await this.get(owner, sessionId);
    return { ...view, hostedUrl: `${this.publicOrigin.origin()}/verify/${sessionId}#${clientSecret}`, clientSecret };
  }

  /** The service's public address of `path`. */
  publicUrl(path: string): string {
    return `${this.publicOrigin.origin()}${path}`;
  }

  /**
   * A visit of a reusable link: a new session of the flow's newest version (the customer id names
   * the link), on the key that made the link, counted against its rate limit; undefined when the
   * link is unknown or its key revoked.
   */
  async startFromLink(linkId: string, reply: FastifyReply): Promise<CreatedSessionView | undefined> {
    const link = LINK_ID.test(linkId) ? await readLink(this.pool, linkId) : undefined;
    if (link === undefined) return undefined;
    const key = await this.apiKeys.admitOwnKey(link.organization_id, link.environment as FlowOwner['environment'], link.key_id, reply);
    if (key === undefined) return undefined;
    return this.create(
      key,
      { flowId: link.flow_id, customerId: `link:${linkId}` },
      { correlationId: `link-${linkId}-${this.ids.eventId()}`, actor: { type: 'api_key', id: key.keyId } },
    );
  }

  /** The session from the read model; an open one past its time is expired first (its stream says so, then the read). */
  async get(owner: FlowOwner, sessionId: string): Promise<SessionView> {
    let row = SESSION_ID.test(sessionId) ? await readSession(this.pool, owner, sessionId) : undefined;
    if (row === undefined) throw new NotFound('No verification session with this id');
    if ((row.status === 'created' || row.status === 'in_progress') && row.expires_at.getTime() <= this.clock.now().getTime()) {
      await this.expire(sessionId);
      row = (await readSession(this.pool, owner, sessionId)) ?? row;
    }
    return this.view(row);
  }

  async list(owner: FlowOwner, query: Record<string, unknown>, page: number, pageSize: number): Promise<{ total: number; sessions: SessionView[] }> {
    const status = query.status;
    const flowId = query.flowId;
    const errors = [];
    if (status !== undefined && (typeof status !== 'string' || !(SESSION_STATUSES as readonly string[]).includes(status)))
      errors.push({ field: 'status', message: `must be one of ${SESSION_STATUSES.join(', ')}` });
    if (flowId !== undefined && (typeof flowId !== 'string' || flowId.length > 40)) errors.push({ field: 'flowId', message: 'must be a flow id' });
    if (errors.length > 0) throw new ValidationFailed(errors);
    const { total, rows } = await readSessions(this.pool, owner, { status: status as string | undefined, flowId: flowId as string | undefined }, page, pageSize);
    return { total, sessions: await Promise.all(rows.map((row) => this.view(row))) };
  }

  async cancel(owner: FlowOwner, sessionId: string, context: CommandContext): Promise<SessionView> {
    if (!SESSION_ID.test(sessionId)) throw new NotFound('No verification session with this id');
    // One past its time is expired, not cancelled.
    await this.expire(sessionId);
    await this.execute(sessionId, { type: 'Cancel', owner }, context);
    return this.get(owner, sessionId);
  }

  /**
   * Erases what the person gave: the selfies and document images deleted, the session's data key destroyed (what is
   * sealed under it, in the log and in the read model, can no longer be opened), and the
   * session's verifications erased as any other. Recorded first, so a retry completes it.
   */
  async erase(key: AuthenticatedKey, sessionId: string, context: CommandContext): Promise<SessionView> {
    const owner = ownerOf(key);
    if (!SESSION_ID.test(sessionId)) throw new NotFound('No verification session with this id');
    const at = this.clock.now();
    const state = await this.eraseFiles(sessionId, owner, at, context);
    const references = [state.identity?.reference, state.decision?.faceMatchReference].filter((reference): reference is string => typeof reference === 'string');
    for (const reference of references) await this.erasure.erase(reference, key, context);
    return this.get(owner, sessionId);
  }

  // The reviewer's side: the organization's owner in the console, an operator in theirs or through the admin API.

  /** The owner of a session, for an operator (any organization); 404 when there is none. */
  async ownerOfSession(sessionId: string): Promise<FlowOwner> {
    const row = SESSION_ID.test(sessionId) ? await readSessionAnyOwner(this.pool, sessionId) : undefined;
    if (row === undefined) throw new NotFound('No verification session with this id');
    return { organizationId: row.organization_id, environment: row.environment as FlowOwner['environment'] };
  }

  /** Every organization's sessions in review, oldest first: the operators' queue. */
  async inReview(page: number, pageSize: number): Promise<{ total: number; sessions: ReviewQueueItem[] }> {
    const { total, rows } = await readSessionsInReview(this.pool, page, pageSize);
    return {
      total,
      sessions: rows.map((row) => ({
        id: row.id,
        organizationId: row.organization_id,
        environment: row.environment,
        flowId: row.flow_id,
        reasons: row.reasons,
        faceMatchConfidence: row.face_match_confidence,
        decidedAt: iso(row.decided_at) as string,
      })),
    };
  }

  /** The session as its reviewer sees it: its history from the stream, whether a selfie can be shown, the record's portrait link. */
  async review(owner: FlowOwner, sessionId: string): Promise<SessionReview> {
    const session = await this.get(owner, sessionId);
    const events = await this.store.readStream(verificationSessionStream(sessionId), { direction: 'forwards', fromRevision: 0n, maxCount: MAX_HISTORY_EVENTS });
    const history = events.map((event) => ({ step: SESSION_HISTORY_STEPS[event.type as VerificationSessionEvent['type']] ?? 'other', at: iso(occurredAt(event)) as string }));
    const state = events.reduce(
      (folded, event) => verificationSessionDecider.evolve(folded, event as unknown as VerificationSessionEvent, { revision: event.revision, occurredAt: occurredAt(event) }),
      verificationSessionDecider.initialState,
    );
    const erased = session.personalDataErasedAt !== null;
    let portraitUrl: string | null = null;
    if (!erased && session.verifications.identity !== null) {
      const identity = await this.queries.execute(new GetVerification(owner, session.verifications.identity)).catch((error: unknown) => {
        if (error instanceof NotFound) return null;
        throw error;
      });
      const url = identity?.result.portraitUrl;
      portraitUrl = typeof url === 'string' ? url : null;
    }
    return {
      session,
      organizationId: owner.organizationId,
      identityKind: state.identity?.kind ?? null,
      history,
      selfie: !erased && state.selfieId !== null,
      portraitUrl,
      reviewReasons: REVIEW_REASONS,
    };
  }

  /** The session's latest selfie, opened from the sealed store for its reviewer; 404 when none or erased. */
  async reviewSelfie(owner: FlowOwner, sessionId: string): Promise<{ contentType: string; bytes: Buffer }> {
    await this.get(owner, sessionId);
    const folded = await this.handler.read(stream(sessionId));
    const selfieId = folded.state.selfieId;
    const key = await this.keys.sealingKey(sessionId);
    if (selfieId === null || folded.state.personalDataErasedAt !== null || key.status !== 'open') throw new NotFound('This session has no selfie to show');
    const selfie = await this.files.get(selfieId, async (reference) => (reference === sessionId ? key.key : null));
    if (selfie === null) throw new NotFound('This session has no selfie to show');
    return { contentType: selfie.contentType, bytes: selfie.bytes };
  }

  /** Approves or declines a session in review with a reason of the fixed list: a `VerificationSessionReviewed` on its stream. */
  async decideReview(owner: FlowOwner, sessionId: string, body: unknown, reviewedBy: Reviewer, context: CommandContext): Promise<SessionView> {
    const { decision, reason } = parseReviewInput(body);
    if (!SESSION_ID.test(sessionId)) throw new NotFound('No verification session with this id');
    await this.execute(sessionId, { type: 'Review', owner, at: this.clock.now(), decision, reason, reviewedBy }, context);
    return this.get(owner, sessionId);
  }

  /**
   * The retention sweep's erasure of an ended session: recorded, its selfies and document images
   * deleted, its data key destroyed. Its checks are ordinary verifications, which the verifications'
   * own retention sweep erases. Answers whether it erased anything.
   */
  async eraseForRetention(sessionId: string, owner: FlowOwner, at: Date): Promise<boolean> {
    await this.eraseFiles(sessionId, owner, at, { correlationId: `session-retention-${sessionId}`, actor: RETENTION_ACTOR });
    return true;
  }

  /** Records the session's erasure, deletes its selfies and document images and destroys its data key; its checks are left to the caller. */
  private async eraseFiles(sessionId: string, owner: FlowOwner, at: Date, context: CommandContext): Promise<VerificationSessionState> {
    const state = await this.execute(sessionId, { type: 'RecordErasure', owner, at }, context);
    for (const fileId of [...state.selfieIds, ...state.documents.map((taken) => taken.documentId)]) await this.files.delete(fileId);
    await this.keys.destroy(owner.organizationId, sessionId, new Date(state.personalDataErasedAt ?? at.toISOString()));
    return state;
  }

  // The browser's side (the client secret).

  /** The session the secret opens, while the browser may still act on it: 401 for a wrong secret (or another session's), 409 session_closed once ended. */
  async authorise(sessionId: string, authorization: string | undefined): Promise<Folded<VerificationSessionState, undefined>> {
    const secret = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    if (!SESSION_ID.test(sessionId) || secret === undefined || !CLIENT_SECRET.test(secret)) throw new Unauthenticated('The session secret is not valid');
    const folded = await this.handler.read(stream(sessionId));
    const created = folded.state.created;
    if (created === null || !timingSafeEqual(Buffer.from(created.secretHash, 'hex'), sha256(secret))) throw new Unauthenticated('The session secret is not valid');
    const limit = await this.limiter.consume(`verificationSession:${sessionId}`, SESSION_REQUESTS_PER_MINUTE);
    if (!limit.allowed) throw new RateLimited(`Too many requests for this session; try again in ${limit.resetSeconds} s`, { retryAfterSeconds: limit.resetSeconds });
    const { status } = folded.state;
    if ((status === 'created' || status === 'in_progress') && Date.parse(created.expiresAt) <= this.clock.now().getTime()) {
      await this.expire(sessionId);
      return this.handler.read(stream(sessionId), folded);
    }
    return folded;
  }

  /** Who may frame the session's page (the flow version's allowed origins) and the logo's origin; undefined for an unknown session. */
  async framing(sessionId: string): Promise<{ allowedOrigins: readonly string[]; logoOrigin: string | null } | undefined> {
    if (!SESSION_ID.test(sessionId)) return undefined;
    const created = (await this.handler.read(stream(sessionId))).state.created;
    if (created === null) return undefined;
    const definition = await this.definitionOf(created);
    const logo = definition.branding.logoUrl;
    return { allowedOrigins: definition.allowedOrigins, logoOrigin: logo === null ? null : new URL(logo).origin };
  }

  /** 409 session_closed (with the session's status) unless the browser may still act on the session (created or in progress). */
  assertOpen(folded: Folded<VerificationSessionState, undefined>): void {
    const { status } = folded.state;
    // The status tells the page what to say (an expired link from a finished one); the secret's holder may know it.
    if (status !== 'created' && status !== 'in_progress') throw new SessionClosed(`This session is ${status.replace('_', ' ')}`, { status });
  }

  async presentation(folded: Folded<VerificationSessionState, undefined>): Promise<Presentation> {
    const created = createdOf(folded.state);
    const definition = await this.definitionOf(created);
    const consent = consentText(definition, this.config.verifications.retentionDays);
    return {
      sessionId: created.sessionId,
      status: folded.state.status,
      expiresAt: created.expiresAt,
      branding: definition.branding,
      steps: created.steps,
      identityKinds: identityKindsOf(definition),
      documents: documentKindsOf(definition).map((document) => ({ document, sides: DOCUMENT_SIDES[document] })),
      consent: { textVersion: consent.version, textHash: consent.hash, text: consent.text },
      faceModelsPath: FACE_MODELS_PATH,
    };
  }

  /** Records what the person agreed to: the text they were served (its version and hash must be the current ones) and when. */
  async consent(folded: Folded<VerificationSessionState, undefined>, body: unknown): Promise<{ status: string }> {
    const created = createdOf(folded.state);
    const current = consentText(await this.definitionOf(created), this.config.verifications.retentionDays);
    const given = isObject(body) ? body : {};
    if (given.textVersion !== current.version || given.textHash !== current.hash) {
      throw new ValidationFailed([{ field: 'textHash', message: 'is not the hash of the consent text this session shows: load it again' }]);
    }
    const at = this.clock.now();
    const key = await this.sealingKey(created.sessionId);
    const consent = sealedValue(key, created.sessionId, 'VerificationSessionConsentGiven', 'consent', {
      textVersion: current.version,
      textHash: current.hash,
      agreedAt: at.toISOString(),
    });
    const state = await this.execute(created.sessionId, { type: 'GiveConsent', at, consent }, this.browserContext(created.sessionId), folded);
    return { status: state.status };
  }

  /**
   * Runs the identity check the person chose as an ordinary verification on the session's key,
   * then records its reference (the number sealed). The browser learns that it ran, not what it
   * found: the decision is the integrator's to read.
   */
  async identity(folded: Folded<VerificationSessionState, undefined>, body: unknown, reply: FastifyReply): Promise<{ status: string; checked: true }> {
    const created = createdOf(folded.state);
    const definition = await this.definitionOf(created);
    const given = isObject(body) ? body : {};
    const kinds = identityKindsOf(definition);
    const kind = given.kind;
    if (typeof kind !== 'string' || !(kinds as readonly string[]).includes(kind)) throw new ValidationFailed([{ field: 'kind', message: `must be one of ${kinds.join(', ')}` }]);
    if (typeof given.number !== 'string') throw new ValidationFailed([{ field: 'number', message: 'is required' }]);
    const number = given.number.replace(/[\s-]/g, '');
    const at = this.clock.now();
    const placeholder = { sealed: 'aes-256-gcm', v: 1, nonce: '', data: '', tag: '' } as Sealed;
    // Refused before any money moves when the session may not run it (no consent, too many checks, closed).
    verificationSessionDecider.decide({ type: 'RecordIdentityCheck', at, check: { reference: '', kind, outcome: 'found' }, identity: placeholder }, folded.state);
    const view = await this.runCheck(created, kind, { [IDENTITY_FIELD[kind as IdentityKind]]: number }, reply);
    const key = await this.sealingKey(created.sessionId);
    const identity = sealedValue(key, created.sessionId, 'VerificationSessionIdentityChecked', 'identity', { kind, number });
    const outcome = view.status === 'found' ? 'found' : 'not_found';
    const state = await this.execute(
      created.sessionId,
      { type: 'RecordIdentityCheck', at, check: { reference: view.reference, kind, outcome }, identity },
      this.browserContext(created.sessionId),
    );
    return { status: state.status, checked: true };
  }

  /**
   * Takes the selfie: re-encoded (no metadata survives), checked by the server's own face check,
   * stored sealed under the session's key. `livenessFrames` (at most 6, from the page's camera
   * guide) are judged here again for the active step (a head turn or a blink), those of the selfie's
   * person only, and not kept.
   */
  async selfie(folded: Folded<VerificationSessionState, undefined>, body: unknown): Promise<{ status: string; accepted: true; liveness: string | null }> {
    const created = createdOf(folded.state);
    const at = this.clock.now();
    verificationSessionDecider.decide({ type: 'RecordSelfie', at, selfieId: '', liveness: null }, folded.state);
    const given = isObject(body) ? body : {};
    const image = given.image;
    if (!isImageText(image)) throw new ValidationFailed([{ field: 'image', message: 'must be a base64 JPEG or PNG of at most 1 MiB' }]);
    const frames = given.livenessFrames ?? [];
    if (!Array.isArray(frames) || frames.length > MAX_LIVENESS_FRAMES || !frames.every(isImageText)) {
      throw new ValidationFailed([{ field: 'livenessFrames', message: `must be at most ${MAX_LIVENESS_FRAMES} base64 JPEG or PNG images of at most 1 MiB each` }]);
    }
    const kept = reencodeSelfie(Buffer.from(image, 'base64'));
    if ('problem' in kept) throw new SelfieRefused([kept.problem]);
    const check = await this.faces.checkSelfie(kept.jpeg);
    if (!check.passed) throw new SelfieRefused(check.problems);
    const poses = [];
    for (const frame of frames) {
      const pose = await this.faces.framePose(Buffer.from(frame, 'base64'));
      // A frame counts with one face only, and the selfie's person's by its description: another person
      // turning, or frames of no face, show nothing of the person in the selfie.
      const same = pose?.descriptor != null && check.descriptor !== null && this.faces.similarity(pose.descriptor, check.descriptor) >= LIVENESS_LIMITS.minSelfieSimilarity;
      if (pose !== null && pose.faces === 1 && same) poses.push(pose);
    }
    const liveness = livenessStep(poses);
    const key = await this.sealingKey(created.sessionId);
    const selfieId = await this.files.put(created.organizationId, 'image/jpeg', kept.jpeg, { reference: created.sessionId, key });
    const state = await this.execute(created.sessionId, { type: 'RecordSelfie', at, selfieId, liveness }, this.browserContext(created.sessionId));
    return { status: state.status, accepted: true, liveness };
  }

  /**
   * Takes one side of a document the flow accepts: re-encoded (no metadata survives), checked again
   * by the server with the page's own measures (framed, large enough, sharp, no glare) and for the
   * printed portrait, stored sealed under the session's key like a selfie.
   */
  async document(folded: Folded<VerificationSessionState, undefined>, body: unknown): Promise<{ status: string; accepted: true }> {
    const created = createdOf(folded.state);
    const at = this.clock.now();
    const given = isObject(body) ? body : {};
    const documents = documentKindsOf(await this.definitionOf(created));
    const document = given.document;
    if (typeof document !== 'string' || !(documents as readonly string[]).includes(document)) {
      // A flow without documents answers as the step it is: out of order.
      verificationSessionDecider.decide({ type: 'RecordDocument', at, documentId: '', document: 'passport', side: 'data_page' }, folded.state);
      throw new ValidationFailed([{ field: 'document', message: `must be one of ${documents.join(', ')}` }]);
    }
    const sides = DOCUMENT_SIDES[document as DocumentKind];
    const side = given.side;
    if (typeof side !== 'string' || !sides.includes(side)) throw new ValidationFailed([{ field: 'side', message: `must be one of ${sides.join(', ')}` }]);
    verificationSessionDecider.decide({ type: 'RecordDocument', at, documentId: '', document: document as DocumentKind, side }, folded.state);
    const image = given.image;
    if (!isImageText(image)) throw new ValidationFailed([{ field: 'image', message: 'must be a base64 JPEG or PNG of at most 1 MiB' }]);
    const kept = reencodeImage(Buffer.from(image, 'base64'), DOCUMENT_IMAGE);
    if ('problem' in kept) throw new DocumentRefused([kept.problem]);
    const imageKind = (sides.length === 1 ? document : `${document}_${side}`) as DocumentImageKind;
    const check = await this.faces.checkDocument(kept.jpeg, imageKind);
    if (!check.passed) throw new DocumentRefused(check.problems);
    const key = await this.sealingKey(created.sessionId);
    const documentId = await this.files.put(created.organizationId, 'image/jpeg', kept.jpeg, { reference: created.sessionId, key });
    const state = await this.execute(
      created.sessionId,
      { type: 'RecordDocument', at, documentId, document: document as DocumentKind, side },
      this.browserContext(created.sessionId),
    );
    return { status: state.status, accepted: true };
  }

  /**
   * Submits, then decides: the face match (an ordinary face_match check of the selfie against the
   * identity record's portrait) when the flow takes a selfie and the record was found. Answers the
   * redirect with the session id only, never the decision.
   */
  async submit(folded: Folded<VerificationSessionState, undefined>, reply: FastifyReply): Promise<{ status: 'submitted'; redirectUrl: string | null }> {
    const created = createdOf(folded.state);
    const context = this.browserContext(created.sessionId);
    const submitted = await this.execute(created.sessionId, { type: 'Submit', at: this.clock.now() }, context, folded);
    let faceMatch: FaceMatchOutcome | null = null;
    if (created.steps.includes('selfie') && submitted.identity?.outcome === 'found' && FACE_MATCH_KINDS.includes(submitted.identity.kind as IdentityKind)) {
      faceMatch = await this.faceMatch(created, submitted, reply).catch((error: unknown) => {
        // Not charged when it failed; the session goes to review rather than waiting for ever.
        this.logger.warn(`The face match of a session could not run (${error instanceof AppError ? error.code : 'error'}); it goes to review`);
        return null;
      });
    }
    await this.execute(created.sessionId, { type: 'Decide', faceMatch }, context);
    const definition = await this.definitionOf(created);
    const redirectUrl = definition.redirectUrl === null ? null : withSessionId(definition.redirectUrl, created.sessionId);
    return { status: 'submitted', redirectUrl };
  }

  // Inside.

  private async faceMatch(created: VerificationSessionCreated['data'], state: VerificationSessionState, reply: FastifyReply): Promise<FaceMatchOutcome> {
    const dataKey = await this.sealingKey(created.sessionId);
    const identity = open(dataKey, state.sealedIdentity as SealedEnvelope, {
      reference: created.sessionId,
      eventType: 'VerificationSessionIdentityChecked',
      field: 'identity',
    }) as { kind: string; number: string };
    const selfie = await this.files.get(state.selfieId as string, async (reference) => (reference === created.sessionId ? dataKey : null));
    if (selfie === null) throw new ServiceUnavailable('The selfie could not be read');
    const view = await this.runCheck(created, 'face_match', { image: selfie.bytes.toString('base64'), [identity.kind]: identity.number }, reply);
    const match = view.result.match === true;
    const confidence = typeof view.result.confidence === 'number' ? view.result.confidence : 0;
    return { reference: view.reference, match, confidence };
  }

  /** One ordinary check on the session's key, exactly as POST /v1/{scope} with that key would run it. */
  private async runCheck(created: VerificationSessionCreated['data'], scope: string, input: JsonObject, reply: FastifyReply): Promise<VerificationView> {
    const key = await this.apiKeys.admitOwnKey(created.organizationId, created.environment as FlowOwner['environment'], created.keyId, reply);
    if (key === undefined) throw new Forbidden('session_key_revoked', 'The key that created this session was revoked: start a new session');
    return this.commands.execute(
      new RunVerification(key, scope, input, { correlationId: `session-${created.sessionId}-${this.ids.eventId()}`, actor: { type: 'api_key', id: key.keyId } }),
    );
  }

  /**
   * Decides a session whose decision was cut short after its submission (a crash, a restart):
   * without a face match, so it goes to review (or declined, the record not found). Answers whether
   * it decided it.
   */
  async decideUndecided(sessionId: string): Promise<boolean> {
    const folded = await this.handler.read(stream(sessionId));
    if (folded.state.status !== 'submitted') return false;
    const handled = await this.handler.handle(
      stream(sessionId),
      { type: 'Decide', faceMatch: null },
      { correlationId: `session-recovery-${sessionId}`, actor: SYSTEM_ACTOR },
      { from: { folded, current: true } },
    );
    if (handled.status === 'appended') await this.waiter.waitFor([VERIFICATION_FLOWS_PROJECTION], handled.position, 5_000);
    return handled.status === 'appended';
  }

  /** Records the expiry of an open session past its time (`at`, now by default); nothing otherwise (nor for an unknown one). Answers whether it expired it. */
  async expire(sessionId: string, at: Date = this.clock.now()): Promise<boolean> {
    const folded = await this.handler.read(stream(sessionId));
    if (folded.state.created === null) return false;
    const handled = await this.handler.handle(
      stream(sessionId),
      { type: 'Expire', at },
      { correlationId: `session-expiry-${sessionId}`, actor: SYSTEM_ACTOR },
      { from: { folded, current: true } },
    );
    if (handled.status === 'appended') await this.waiter.waitFor([VERIFICATION_FLOWS_PROJECTION], handled.position, 5_000);
    return handled.status === 'appended';
  }

  private async execute(
    sessionId: string,
    command: VerificationSessionCommand,
    context: CommandContext,
    from?: Folded<VerificationSessionState, undefined>,
  ): Promise<VerificationSessionState> {
    const handled = await this.handler.handle(stream(sessionId), command, context, from === undefined ? {} : { from: { folded: from, current: false } });
    if (handled.status === 'conflict') throw new ServiceUnavailable('The session is being changed concurrently; try again');
    if (handled.status === 'appended') await this.waiter.waitFor([VERIFICATION_FLOWS_PROJECTION], handled.position, 5_000);
    return handled.folded.state;
  }

  private browserContext(sessionId: string): CommandContext {
    return { correlationId: `session-${sessionId}-${this.ids.eventId()}`, actor: HOSTED_PAGE };
  }

  private async sealingKey(sessionId: string): Promise<Buffer> {
    const key = await this.keys.sealingKey(sessionId);
    if (key.status !== 'open') throw new Forbidden('personal_data_destroyed', "This session's personal data was erased");
    return key.key;
  }

  private definitionOf(created: VerificationSessionCreated['data']): Promise<FlowDefinition> {
    return this.flows.definition(created, created.flowId, created.flowVersion);
  }

  private async view(row: SessionRow): Promise<SessionView> {
    const key = await this.keys.get(row.id);
    const customer =
      key.status === 'open'
        ? (open(key.key, row.customer as unknown as SealedEnvelope, { reference: row.id, eventType: 'VerificationSessionCreated', field: 'customer' }) as {
            customerId: string;
            metadata: JsonObject | null;
          })
        : null;
    const decided = row.decided_at !== null;
    return {
      id: row.id,
      environment: row.environment,
      flowId: row.flow_id,
      flowVersion: row.flow_version,
      status: row.status,
      customerId: customer?.customerId ?? null,
      metadata: customer?.metadata ?? null,
      decision: decided
        ? {
            reasons: row.reasons,
            faceMatchConfidence: row.face_match_confidence,
            review:
              row.review_decision === null
                ? null
                : {
                    decision: row.review_decision,
                    reason: row.review_reason as string,
                    reviewedBy: row.reviewed_by as string,
                    reviewedAt: iso(row.reviewed_at) as string,
                  },
          }
        : null,
      liveness: row.liveness,
      documents: row.documents,
      verifications: { identity: row.identity_reference, faceMatch: row.face_match_reference },
      expiresAt: iso(row.expires_at) as string,
      createdAt: iso(row.created_at) as string,
      submittedAt: iso(row.submitted_at),
      decidedAt: iso(row.decided_at),
      personalDataErasedAt: iso(row.personal_data_erased_at),
    };
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function ownerOf(key: AuthenticatedKey): FlowOwner {
  return { organizationId: key.organizationId, environment: key.environment };
}

const isImageText = (value: unknown): value is string => typeof value === 'string' && value.length <= 1_500_000 && /^[A-Za-z0-9+/]*={0,2}$/.test(value);

function createdOf(state: VerificationSessionState): VerificationSessionCreated['data'] {
  if (state.created === null) throw new NotFound('No verification session with this id');
  return state.created;
}

function sealedValue(key: Buffer, sessionId: string, eventType: string, field: string, value: unknown): Sealed {
  return seal(key, value, { reference: sessionId, eventType, field }) as unknown as Sealed;
}

/** The redirect URL with `session=<id>` added to its query: the id only, never the result. */
export function withSessionId(redirectUrl: string, sessionId: string): string {
  const url = new URL(redirectUrl);
  url.searchParams.set('session', sessionId);
  return url.toString();
}

function parseSessionInput(body: unknown): { flowId: string; customerId: string; metadata: JsonObject | null } {
  if (!isObject(body)) throw new ValidationFailed([{ field: 'body', message: 'must be a JSON object' }]);
  const errors = [];
  const { flowId, customerId, metadata } = body;
  if (typeof flowId !== 'string' || flowId.length > 40) errors.push({ field: 'flowId', message: 'must be the id of a flow' });
  if (typeof customerId !== 'string' || customerId.trim() === '' || customerId.length > MAX_CUSTOMER_ID)
    errors.push({ field: 'customerId', message: `must be your own id for the person, 1 to ${MAX_CUSTOMER_ID} characters` });
  if (metadata !== undefined && metadata !== null && (!isObject(metadata) || Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES)) {
    errors.push({ field: 'metadata', message: `must be a JSON object of at most ${MAX_METADATA_BYTES} bytes` });
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { flowId: flowId as string, customerId: customerId as string, metadata: (metadata as JsonObject | undefined) ?? null };
}
