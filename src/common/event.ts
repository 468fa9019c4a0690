import type { EventToAppend, JsonObject, RecordedEvent } from '../event-store/event-store.port.js';
import { CANONICAL_INSTANT, parseInstantText } from './time.js';

/**
 * A domain event is plain data: a past-tense type and a JSON body carrying its schema version.
 * No classes, no instanceof: events come back from the store as plain objects.
 */
export interface Event<Type extends string, Data extends JsonObject> {
  readonly type: Type;
  readonly data: Data & { readonly schemaVersion: number };
}

/**
 * Who caused an event: an integrator's API key, an integrator's console user (`user`, id the user's),
 * an operator (the admin token, the CLI, or an operator's console account as `user:<id>`), or the
 * service itself (recovery, first run).
 */
export interface Actor extends JsonObject {
  type: 'api_key' | 'user' | 'operator' | 'system';
  id: string;
}

/** Metadata on every event, so any event can be traced to the request and actor behind it: correlation = request id, causation, actor, time. */
export interface EventMetadata extends JsonObject {
  correlationId: string;
  causationId: string | null;
  actor: Actor;
  occurredAt: string;
  // And `callerRequestIdHash` when REQUEST_ID_HASH_KEY is set and the caller sent an X-Request-Id:
  // its HMAC-SHA-256 under that key, never the id itself.
}

/** What a command handler knows about the request that caused it. */
export interface CommandContext {
  readonly correlationId: string;
  readonly actor: Actor;
  readonly callerRequestIdHash?: string;
}

export function toAppend(event: Event<string, JsonObject>, id: string, context: CommandContext, occurredAt: Date, causationId: string | null = null): EventToAppend {
  const metadata: EventMetadata = {
    correlationId: context.correlationId,
    causationId,
    actor: context.actor,
    occurredAt: occurredAt.toISOString(),
    ...(context.callerRequestIdHash === undefined ? {} : { callerRequestIdHash: context.callerRequestIdHash }),
  };
  return { id, type: event.type, data: event.data, metadata };
}

/** Narrows a recorded event to a stream's union. The caller's stream read guarantees the category. */
export function asDomainEvent<E extends Event<string, JsonObject>>(recorded: RecordedEvent): E {
  return { type: recorded.type, data: recorded.data } as unknown as E;
}

/** When a fact happened: the command's time from the metadata, else the store's commit time. */
export function occurredAt(event: Pick<RecordedEvent, 'metadata' | 'createdAt'>): Date {
  const stamped = event.metadata.occurredAt;
  return typeof stamped === 'string' ? new Date(parseInstantText(stamped)) : event.createdAt;
}

/**
 * `occurredAt(event).toISOString()`, without the Date when the metadata already holds that text
 * (every event this service writes: it stamps `toISOString()`). For the bulk paths, which write
 * the time as text and would otherwise parse and print it again for every event.
 */
export function occurredAtText(event: Pick<RecordedEvent, 'metadata' | 'createdAt'>): string {
  const stamped = event.metadata.occurredAt;
  if (typeof stamped === 'string' && CANONICAL_INSTANT.test(stamped)) {
    // A day past its month's end (Feb 30) matches the pattern; Date rolls it over: take Date's text then.
    const day = Number(stamped.slice(8, 10));
    if (day <= 28) return stamped;
  }
  return occurredAt(event).toISOString();
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: 'ledger' };

/** A text field of a stored event's data; anything else there breaks an invariant of the event's schema. */
export function textField(data: JsonObject, field: string): string {
  const value = data[field];
  if (typeof value !== 'string') throw new Error(`invariant: an event's ${field} is text, not ${value === null ? 'null' : typeof value}`);
  return value;
}
