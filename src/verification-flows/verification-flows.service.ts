import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { Forbidden, NotFound, ServiceUnavailable } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG, RUNTIME, type Runtime } from '../config/runtime.js';
import { DataKeys, OrganizationKeysDestroyed } from '../data-protection/data-keys.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { EventSourcedHandler, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../event-sourcing/retry.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { parseFlowDefinition, withDefaults, type FlowDefinition } from './flow-definition.js';
import { verificationFlowDecider, type FlowOwner, type VerificationFlowCommand, type VerificationFlowState } from './verification-flow.decider.js';
import { flowSealContext, verificationFlowStream, type VerificationFlowEvent } from './verification-flow.events.js';
import { readFlow, readFlows, readFlowVersion, readLinks, VERIFICATION_FLOWS_PROJECTION, type FlowRow } from './verification-flows.read-model.js';

const RETRY = linearJitter(10, 5);
const PAGING = { pageSize: 100, maxPages: 20 };
export const FLOW_ID = /^vfl_[0-9A-HJKMNP-TV-Z]{26}$/;

export interface FlowView extends FlowDefinition {
  readonly id: string;
  readonly version: number;
  readonly environment: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

function stream(flowId: string): Stream<VerificationFlowState, VerificationFlowCommand, VerificationFlowEvent> {
  return { id: verificationFlowStream(flowId), decider: verificationFlowDecider };
}

const iso = (date: Date) => date.toISOString().replace(/Z$/, '+00:00');

/**
 * Verification flows: the `verificationFlow-{id}` streams, written through the event-sourcing
 * kernel, read from the `verification_flows` projection once it has applied the write. Each
 * version's definition is sealed under the organization's key-encryption key, bound to the flow
 * and the version; reads open it.
 */
@Injectable()
export class VerificationFlows {
  private readonly handler: EventSourcedHandler<VerificationFlowState, VerificationFlowCommand, VerificationFlowEvent>;

  constructor(
    @Inject(EVENT_STORE) store: EventStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
  }

  /** Plain-http URLs and origins: on the embedded default only (everything there is on loopback). */
  parse(body: unknown): FlowDefinition {
    return parseFlowDefinition(body, { allowHttp: this.runtime.embedded || this.config.webhooks.allowPrivateTargets });
  }

  async create(owner: FlowOwner, body: unknown, context: CommandContext): Promise<FlowView> {
    const definition = this.parse(body);
    const flowId = `vfl_${this.ids.reference().slice('vrf_'.length)}`;
    const sealed = await this.seal(owner.organizationId, flowId, 1, definition);
    const handled = await this.handler.handle(stream(flowId), { type: 'CreateFlow', flowId, owner, definition: sealed }, context);
    if (handled.status !== 'appended') throw new ServiceUnavailable('The flow could not be written; try again');
    await this.waiter.waitFor([VERIFICATION_FLOWS_PROJECTION], handled.position, 5_000);
    return this.get(owner, flowId);
  }

  /** A new version, numbered after the newest; sessions already started keep theirs. */
  async publish(owner: FlowOwner, flowId: string, body: unknown, context: CommandContext): Promise<FlowView> {
    if (!FLOW_ID.test(flowId)) throw new NotFound('No verification flow with this id');
    const definition = this.parse(body);
    const current = await this.handler.read(stream(flowId));
    const version = current.state.version + 1;
    const sealed = await this.seal(owner.organizationId, flowId, version, definition);
    const handled = await this.handler.handle(stream(flowId), { type: 'PublishFlowVersion', owner, version, definition: sealed }, context, {
      from: { folded: current, current: true },
    });
    if (handled.status !== 'appended') throw new ServiceUnavailable('The flow is being changed concurrently; try again');
    await this.waiter.waitFor([VERIFICATION_FLOWS_PROJECTION], handled.position, 5_000);
    return this.get(owner, flowId);
  }

  /** A reusable link of the flow: each visit starts a session, its checks run on `keyId`. */
  async createLink(owner: FlowOwner, flowId: string, keyId: string, context: CommandContext): Promise<{ id: string; flowId: string; createdAt: string }> {
    // The flow as its owner reads it: 404 when unknown, 403 once the organization's keys are destroyed (offboarded).
    await this.get(owner, flowId);
    const linkId = `vln_${this.ids.reference().slice('vrf_'.length)}`;
    const handled = await this.handler.handle(stream(flowId), { type: 'CreateLink', owner, linkId, keyId }, context);
    if (handled.status !== 'appended') throw new ServiceUnavailable('The flow is being changed concurrently; try again');
    await this.waiter.waitFor([VERIFICATION_FLOWS_PROJECTION], handled.position, 5_000);
    return { id: linkId, flowId, createdAt: iso(this.clock.now()) };
  }

  /** The flow's reusable links, newest first. */
  async links(owner: FlowOwner, flowId: string): Promise<{ id: string; flowId: string; createdAt: string }[]> {
    await this.get(owner, flowId);
    return (await readLinks(this.pool, owner, flowId)).map((row) => ({ id: row.id, flowId: row.flow_id, createdAt: iso(row.created_at) }));
  }

  async get(owner: FlowOwner, flowId: string): Promise<FlowView> {
    const row = FLOW_ID.test(flowId) ? await readFlow(this.pool, owner, flowId) : undefined;
    if (row === undefined) throw new NotFound('No verification flow with this id');
    return this.view(row);
  }

  async list(owner: FlowOwner, page: number, pageSize: number): Promise<{ total: number; flows: FlowView[] }> {
    const { total, rows } = await readFlows(this.pool, owner, page, pageSize);
    return { total, flows: await Promise.all(rows.map((row) => this.view(row))) };
  }

  /** The definition of one version of a flow of `owner`: what a new session starts with, or what a session started with. */
  async definition(owner: { organizationId: string }, flowId: string, version: number): Promise<FlowDefinition> {
    const sealed = await readFlowVersion(this.pool, flowId, version);
    if (sealed === undefined) throw new NotFound('No verification flow with this id');
    return this.open(owner.organizationId, flowId, version, sealed);
  }

  private async view(row: FlowRow): Promise<FlowView> {
    const definition = await this.open(row.organization_id, row.id, row.version, row.definition);
    return { id: row.id, version: row.version, environment: row.environment, ...definition, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) };
  }

  private async seal(organizationId: string, flowId: string, version: number, definition: FlowDefinition): Promise<string> {
    const [sealed] = await this.keys.sealForOrganization(organizationId, [{ plain: Buffer.from(JSON.stringify(definition), 'utf8'), context: flowSealContext(flowId, version) }]);
    return sealed;
  }

  private async open(organizationId: string, flowId: string, version: number, sealed: string): Promise<FlowDefinition> {
    let plain: Buffer;
    try {
      [plain] = await this.keys.openForOrganization(organizationId, [{ sealed, context: flowSealContext(flowId, version) }]);
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed) throw new Forbidden('personal_data_destroyed', "This organization's personal data was destroyed (offboarded)");
      throw error;
    }
    return withDefaults(JSON.parse(plain.toString('utf8')) as Parameters<typeof withDefaults>[0]);
  }
}
