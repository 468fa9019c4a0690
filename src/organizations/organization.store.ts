import { Inject, Injectable } from '@nestjs/common';
import { AuthenticatedKeyCache } from '../auth/key-cache.js';
import { Clock } from '../common/clock.js';
import { ChangeNotInForce, Conflict, NotFound } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { EventSourcedHandler, NO_STREAM, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../event-sourcing/retry.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { initialState, organizationDecider, type OrganizationCommand, type OrganizationState } from './organization.decider.js';
import type { OrganizationEvent } from './organization.events.js';

/** Attempts of one command against concurrent writers of the same organization before a 409, and the jittered pause per attempt so far. */
const RETRY = linearJitter(10, 5);
/** An organization stream longer than 50 pages of 1,000 events is a bug or an attack, not an organization. */
const PAGING = { pageSize: 1_000, maxPages: 50 };
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

function nextExpected(revision: bigint): bigint | 'no_stream' {
  return revision === NO_STREAM ? 'no_stream' : revision;
}

function stream(organizationId: string): Stream<OrganizationState, OrganizationCommand, OrganizationEvent> {
  return { id: streams.organization(organizationId), decider: organizationDecider };
}

/** The `organization-{id}` streams, on the event-sourcing kernel; retried appends are its business. */
@Injectable()
export class OrganizationStore {
  private readonly handler: EventSourcedHandler<OrganizationState, OrganizationCommand, OrganizationEvent>;

  constructor(
    @Inject(EVENT_STORE) store: EventStore,
    @Inject(Clock) clock: Clock,
    @Inject(IdGenerator) ids: IdGenerator,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(AuthenticatedKeyCache) private readonly keyCache: AuthenticatedKeyCache,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
  }

  async load(organizationId: string): Promise<Loaded> {
    if (!ORGANIZATION_ID.test(organizationId)) return { state: initialState, revision: 'no_stream' };
    const folded = await this.handler.read(stream(organizationId));
    return { state: folded.state, revision: nextExpected(folded.revision) };
  }

  async loadExisting(organizationId: string): Promise<Loaded> {
    const loaded = await this.load(organizationId);
    if (loaded.state.id === null) throw new NotFound('No organization with that id');
    return loaded;
  }

  /**
   * Runs `command` (built from the current state when a function) and waits for the read models
   * unless told not to. When they do not apply the change within the wait, the answer is
   * ChangeNotInForce: the change is recorded, but this instance's key guard would still act on the
   * previous state. `whenBehind: 'answer'` answers anyway, for changes that take nothing away (a new key).
   */
  async execute(
    organizationId: string,
    command: OrganizationCommand | ((state: OrganizationState) => OrganizationCommand),
    context: CommandContext,
    options: { projectionWaitMs?: number; recorded?: (position: bigint) => void } = {},
    whenBehind: 'refuse' | 'answer' = 'refuse',
  ): Promise<Executed> {
    if (!ORGANIZATION_ID.test(organizationId)) throw new NotFound('No organization with that id');
    const handled = await this.handler.handle(stream(organizationId), command, context);
    if (handled.status === 'conflict') throw new Conflict('The organization is being changed concurrently; try again');
    const { state, revision } = handled.folded;
    const position = handled.status === 'appended' ? handled.position : handled.folded.position;
    if (position !== null) options.recorded?.(position);
    if (handled.status === 'unchanged') return { state, revision: nextExpected(revision), events: [], position: null };
    const applied = await this.waitForProjections(handled.position, options.projectionWaitMs);
    // This instance's key guard sees the change on the next request; others within KEY_CACHE_TTL_MS.
    this.keyCache.invalidate();
    if (!applied && whenBehind === 'refuse') {
      throw new ChangeNotInForce('The change is recorded, but the read models have not applied it yet; it takes effect once they do (see the projections status)', {
        position: handled.position.toString(),
      });
    }
    return { state, revision, events: handled.events, position: handled.position };
  }

  /**
   * True when the organizations and api-keys read models reached `position` within `waitMs`
   * (OPERATOR_CHANGE_WAIT_MS unless told); a wait of 0 is not a wait and counts as reached.
   */
  async waitForProjections(position: bigint, waitMs: number = this.config.admin.changeWaitMs): Promise<boolean> {
    return waitMs <= 0 || this.waiter.waitFor(ORGANIZATION_PROJECTIONS, position, waitMs);
  }
}
