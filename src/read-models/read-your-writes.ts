import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceUnavailable, ValidationFailed } from '../common/errors.js';
import { PROJECTION_WAIT_MS, ProjectionWaiter } from './projection-waiter.js';

/** The stream categories whose writes an integrator reads back through the read models: its wallet and its verifications. */
export const READ_BACK_CATEGORIES = ['wallet', 'verification'] as const;
export type ReadBackCategory = (typeof READ_BACK_CATEGORIES)[number];
/** The newest position written per category, as far as one instance (or one client's token) knows. */
export type WrittenPositions = Partial<Record<ReadBackCategory, bigint>>;

/** Answers of the integrator's writes and reads carry it; a read on any instance that is sent it shows what it covers. */
export const CONSISTENCY_TOKEN_HEADER = 'x-consistency-token';
export const CONSISTENCY_TOKEN_DESCRIPTION =
  'Optional: the X-Consistency-Token of an earlier answer, as it was. The read then shows every write that answer covered, whichever instance answers (it waits up to 2 s for the read models).';
/** Organization and environment pairs remembered; the positions of those forgotten fold into one floor every other pair waits for. */
const MAX_OWNERS = 10_000;
const MAX_POSITION = 2n ** 64n - 1n;
const TOKEN = /^(?:[a-z]+:\d{1,20})(?:,[a-z]+:\d{1,20})*$/;

export interface Owner {
  readonly organizationId: string;
  readonly environment: string;
}

function merge(into: WrittenPositions, from: WrittenPositions): WrittenPositions {
  const merged = { ...into };
  for (const category of READ_BACK_CATEGORIES) {
    const position = from[category];
    if (position !== undefined && position > (merged[category] ?? -1n)) merged[category] = position;
  }
  return merged;
}

/** `verification:<position>,wallet:<position>`; undefined when nothing is known. */
export function formatConsistencyToken(positions: WrittenPositions): string | undefined {
  const parts = READ_BACK_CATEGORIES.filter((category) => positions[category] !== undefined).map((category) => `${category}:${positions[category]}`);
  return parts.length === 0 ? undefined : parts.join(',');
}

/** The header as a client sent it back; 422 when it is not a token this service gives. */
export function parseConsistencyToken(value: unknown): WrittenPositions {
  if (value === undefined) return {};
  const invalid = (): ValidationFailed => new ValidationFailed([{ field: 'X-Consistency-Token', message: 'must be an X-Consistency-Token as an answer gave it, unchanged' }]);
  if (typeof value !== 'string' || value.length > 200 || !TOKEN.test(value)) throw invalid();
  const positions: Record<string, bigint> = {};
  for (const part of value.split(',')) {
    const [category, digits] = part.split(':');
    const position = BigInt(digits);
    if (!(READ_BACK_CATEGORIES as readonly string[]).includes(category) || category in positions || position > MAX_POSITION) throw invalid();
    positions[category] = position;
  }
  return positions;
}

/**
 * Read-your-writes for the integrator's reads of the read models (`GET /v1/wallet`,
 * `/v1/wallet/transactions`, `/v1/verifications`). The writers note, per organization and
 * environment, the position of every wallet and verification event this instance appends; a read
 * waits (bounded) until the projections it reads from have passed the newest such position, and
 * the client's token when it sends one (written on another instance). Answers carry the token of
 * what they cover, so a client that moves to another instance takes its writes with it.
 */
@Injectable()
export class ReadYourWrites {
  private owners = new Map<string, WrittenPositions>();
  private forgotten: WrittenPositions = {};

  constructor(@Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter) {}

  /** Called by the writers after each append (or a fold they decided on) of `owner`'s streams. */
  noteWrite(owner: Owner, category: ReadBackCategory, position: bigint): void {
    const id = `${owner.organizationId}.${owner.environment}`;
    // A pair forgotten earlier starts again from the floor, which holds its old positions.
    const known = this.owners.get(id) ?? this.forgotten;
    if (position <= (known[category] ?? -1n)) return;
    this.owners.delete(id);
    this.owners.set(id, { ...known, [category]: position });
    if (this.owners.size > MAX_OWNERS) {
      const [oldest, positions] = this.owners.entries().next().value as [string, WrittenPositions];
      this.owners.delete(oldest);
      this.forgotten = merge(this.forgotten, positions);
    }
  }

  /** What `owner`'s reads here must show: its writes known to this instance and those of the token. */
  positions(owner: Owner, token: WrittenPositions = {}): WrittenPositions {
    const known = this.owners.get(`${owner.organizationId}.${owner.environment}`) ?? this.forgotten;
    return merge(known, token);
  }

  /** Sets the answer's token to what this instance knows of `owner`'s writes (after a write, whatever its outcome). */
  answerToken(reply: FastifyReply, owner: Owner): void {
    const token = formatConsistencyToken(this.positions(owner));
    if (token !== undefined) void reply.header(CONSISTENCY_TOKEN_HEADER, token);
  }

  /**
   * Before a read of `projections` (which follow `category`): waits until they have applied
   * every write of `owner` this instance knows and those of the request's token; 503 when they
   * have not within `waitMs`. The answer carries the token of what the read covers.
   */
  async beforeRead(
    request: FastifyRequest,
    reply: FastifyReply,
    owner: Owner,
    category: ReadBackCategory,
    projections: readonly string[],
    waitMs: number = PROJECTION_WAIT_MS,
  ): Promise<void> {
    const positions = this.positions(owner, parseConsistencyToken(request.headers[CONSISTENCY_TOKEN_HEADER]));
    const position = positions[category];
    // Most reads come after the projections have passed the key's writes: they go on without a wait or a promise.
    if (position !== undefined && !this.waiter.reached(projections, position) && !(await this.waiter.waitFor(projections, position, waitMs))) {
      throw new ServiceUnavailable(`The read models have not yet applied this key's latest writes (${projections.join(', ')}); try again shortly`);
    }
    const token = formatConsistencyToken(positions);
    if (token !== undefined) void reply.header(CONSISTENCY_TOKEN_HEADER, token);
  }
}
