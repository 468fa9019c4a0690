import { Inject, Injectable } from '@nestjs/common';
import { AuthenticatedKeyCache } from '../auth/key-cache.js';
import { Clock } from '../common/clock.js';
import { Conflict, NotFound } from '../common/errors.js';
import { asDomainEvent, toAppend, type CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { EVENT_STORE, WrongExpectedRevisionError, type EventStore } from '../event-store/event-store.port.js';
import { PROJECTION_WAIT_MS, ProjectionWaiter } from '../read-models/projection-waiter.js';
import { decide, evolve, initialState, type OrganizationCommand, type OrganizationState } from './organization.decider.js';
import type { OrganizationEvent } from './organization.events.js';
import { occurredAt } from '../common/occurred-at.js';

/** Attempts of one command against concurrent writers of the same organization before a 409. */
const MAX_ATTEMPTS = 10;
/** Upper bound of the jittered pause after a lost race, per attempt so far. */
const BACKOFF_STEP_MS = 5;
const PAGE = 1_000;
/** An organization stream longer than this is a bug or an attack, not an organization. */
const MAX_STREAM_PAGES = 50;
export const ORGANIZATION_ID = /^org_[0-9A-HJKMNP-TV-Z]{26}$/;
export const KEY_ID = /^key_[0-9A-HJKMNP-TV-Z]{26}$/;
/** The projections a command waits for, so a read on any instance right after it sees the change. */
export const ORGANIZATION_PROJECTIONS = ['organizations', 'api-keys'] as const;

export interface Loaded {
  readonly state: OrganizationState;
  /** The revision to expect on the next append. */
  readonly revision: bigint | 'no_stream';
}

export interface Executed extends Loaded {
  readonly events: readonly OrganizationEvent[];
  /** Global position of the last event written; null when the command changed nothing. */
  readonly position: bigint | null;
}

/**
 * Load, decide, append, for the `organization-{id}` stream: the one place that knows how. An
 * append that loses a race to another writer is retried from a fresh read, a bounded number of times.
 */
@Injectable()
export class OrganizationStore {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(AuthenticatedKeyCache) private readonly keyCache: AuthenticatedKeyCache,
  ) {}

  async load(organizationId: string): Promise<Loaded> {
    if (!ORGANIZATION_ID.test(organizationId)) return { state: initialState, revision: 'no_stream' };
    let state = initialState;
    let revision: bigint | 'no_stream' = 'no_stream';
    for (let page = 0; page < MAX_STREAM_PAGES; page++) {
      const fromRevision = revision === 'no_stream' ? 0n : revision + 1n;
      const recorded = await this.store.readStream(streams.organization(organizationId), { direction: 'forwards', fromRevision, maxCount: PAGE });
      for (const event of recorded) {
        state = evolve(state, asDomainEvent<OrganizationEvent>(event), occurredAt(event));
        revision = event.revision;
      }
      if (recorded.length < PAGE) return { state, revision };
    }
    throw new Error(`invariant: organization stream ${organizationId} is longer than ${MAX_STREAM_PAGES * PAGE} events`);
  }

  async loadExisting(organizationId: string): Promise<Loaded> {
    const loaded = await this.load(organizationId);
    if (loaded.state.id === null) throw new NotFound('No organization with that id');
    return loaded;
  }

  /** Runs `command` (built from the current state when a function) and waits for the read models unless told not to. */
  async execute(
    organizationId: string,
    command: OrganizationCommand | ((state: OrganizationState) => OrganizationCommand),
    context: CommandContext,
    options: { projectionWaitMs?: number } = {},
  ): Promise<Executed> {
    if (!ORGANIZATION_ID.test(organizationId)) throw new NotFound('No organization with that id');
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await this.load(organizationId);
      const concrete = typeof command === 'function' ? command(state) : command;
      const events = decide(concrete, state);
      if (events.length === 0) return { state, revision, events, position: null };
      const now = this.clock.now();
      try {
        const result = await this.store.append(
          streams.organization(organizationId),
          events.map((event) => toAppend(event, this.ids.eventId(), context, now)),
          { expectedRevision: revision },
        );
        const after = events.reduce((folded, event) => evolve(folded, event, now), state);
        await this.waitForProjections(result.position, options.projectionWaitMs);
        // This instance's key guard sees the change on the next request (others within the cache's TTL).
        this.keyCache.invalidate();
        return { state: after, revision: result.nextExpectedRevision, events, position: result.position };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (attempt >= MAX_ATTEMPTS) throw new Conflict('The organization is being changed concurrently; try again');
        await new Promise((resolveBackoff) => setTimeout(resolveBackoff, Math.random() * BACKOFF_STEP_MS * attempt));
      }
    }
  }

  async waitForProjections(position: bigint, waitMs: number = PROJECTION_WAIT_MS): Promise<void> {
    if (waitMs > 0) await this.waiter.waitFor(ORGANIZATION_PROJECTIONS, position, waitMs);
  }
}
