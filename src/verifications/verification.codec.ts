import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { InvariantViolated } from '../common/errors.js';
import { asDomainEvent, toAppend } from '../common/event.js';
import { isoWithOffset } from '../common/time.js';
import { DataKeys, type DataKeyState, type StoredDataKey } from '../data-protection/data-keys.js';
import { isSealed, open, seal, SealOpenFailed, type SealBinding } from '../data-protection/sealing.js';
import type { JsonObject, RecordedEvent } from '../event-store/event-store.port.js';
import type { EventCodec, EventEnvelope } from '../event-sourcing/codec.js';
import type { VerificationEvent } from './verification.events.js';

/** The personal fields of the verification events, by event type; every other field is a non-personal fact and stays clear. */
export const PERSONAL_FIELDS = {
  VerificationRequested: 'request',
  VerificationCompleted: 'result',
} as const;

export interface OpenedFields {
  readonly request: JsonObject;
  readonly result: JsonObject;
  /** ISO 8601 with offset; null while the fields are readable. */
  readonly personalDataErasedAt: string | null;
}

const binding = (reference: string, eventType: keyof typeof PERSONAL_FIELDS): SealBinding => ({ reference, eventType, field: PERSONAL_FIELDS[eventType] });

/**
 * Seals and opens the personal fields of one verification under its data key (src/data-protection).
 * A field that cannot be opened reads as `{}` with the verification marked erased: a destroyed key
 * dates the erasure; a ciphertext that fails under a live key (tampered, or moved from another
 * event or verification) is an incident, logged without the data, and shown as erased too.
 */
@Injectable()
export class PersonalFields {
  private readonly logger = new Logger('PersonalFields');

  constructor(
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(Clock) private readonly clock: Clock,
  ) {}

  /** Seals a field of a new event; the verification's data key must exist (made before its request is appended). */
  async seal(reference: string, eventType: keyof typeof PERSONAL_FIELDS, value: JsonObject): Promise<JsonObject> {
    const key = await this.keys.sealingKey(reference);
    if (key.status !== 'open') throw new InvariantViolated(`no usable data key for ${reference} (${key.status}) while sealing its ${eventType}`);
    return seal(key.key, value, binding(reference, eventType)) as unknown as JsonObject;
  }

  /** Opens one stored field: unsealed values (fields written before sealing, or an empty result) pass as they are. */
  async open(reference: string, eventType: keyof typeof PERSONAL_FIELDS, stored: JsonObject, known?: DataKeyState): Promise<{ value: JsonObject; erasedAt: string | null }> {
    if (!isSealed(stored)) return { value: stored, erasedAt: null };
    const key = known ?? (await this.keys.get(reference));
    if (key.status === 'destroyed') return { value: {}, erasedAt: isoWithOffset(key.destroyedAt) };
    if (key.status === 'missing') return this.incident(reference, eventType, 'its data key is missing');
    if (key.status === 'unopenable') return this.incident(reference, eventType, 'its data key does not unwrap (tampered, or moved to another organization or environment)');
    try {
      return { value: open(key.key, stored, binding(reference, eventType)) as JsonObject, erasedAt: null };
    } catch (error) {
      if (!(error instanceof SealOpenFailed)) throw error;
      return this.incident(reference, eventType, 'it does not open under its data key (tampered, or moved from another event)');
    }
  }

  /** A verification's request and result as read from the read model: both readable, or both `{}` and the verification erased. */
  async openBoth(reference: string, request: JsonObject, result: JsonObject, stored?: { readonly key: StoredDataKey | undefined }): Promise<OpenedFields> {
    // One key lookup for both fields: from the key's row when the caller read it, else a query on a cache miss.
    const sealed = isSealed(request) || isSealed(result);
    const key = !sealed ? undefined : stored === undefined ? await this.keys.get(reference) : await this.keys.stateOf(reference, stored.key);
    const openedRequest = await this.open(reference, 'VerificationRequested', request, key);
    const openedResult = await this.open(reference, 'VerificationCompleted', result, key);
    const erasedAt = openedRequest.erasedAt ?? openedResult.erasedAt;
    if (erasedAt !== null) return { request: {}, result: {}, personalDataErasedAt: erasedAt };
    return { request: openedRequest.value, result: openedResult.value, personalDataErasedAt: null };
  }

  private incident(reference: string, eventType: string, why: string): { value: JsonObject; erasedAt: string } {
    this.logger.error(`Incident: a sealed field of ${eventType} of ${reference} cannot be opened: ${why}; the verification is shown as erased`);
    return { value: {}, erasedAt: isoWithOffset(this.clock.now()) };
  }
}

/** The codec of the `verification-*` streams: personal fields sealed on the way in, opened on the way out. */
export class VerificationCodec implements EventCodec<VerificationEvent> {
  constructor(private readonly fields: PersonalFields) {}

  async encode(event: VerificationEvent, envelope: EventEnvelope) {
    let stored: VerificationEvent = event;
    if (event.type === 'VerificationRequested') {
      stored = { ...event, data: { ...event.data, request: await this.fields.seal(event.data.reference, event.type, event.data.request) } };
    } else if (event.type === 'VerificationCompleted') {
      stored = { ...event, data: { ...event.data, result: await this.fields.seal(event.data.reference, event.type, event.data.result) } };
    }
    return toAppend(stored, envelope.id, envelope.context, envelope.occurredAt);
  }

  async decode(recorded: RecordedEvent): Promise<VerificationEvent> {
    const event = asDomainEvent<VerificationEvent>(recorded);
    if (event.type === 'VerificationRequested') {
      const { value, erasedAt } = await this.fields.open(event.data.reference, event.type, event.data.request);
      return { ...event, data: { ...event.data, request: value, ...(erasedAt === null ? {} : { personalDataErasedAt: erasedAt }) } };
    }
    if (event.type === 'VerificationCompleted') {
      const { value, erasedAt } = await this.fields.open(event.data.reference, event.type, event.data.result);
      return { ...event, data: { ...event.data, result: value, ...(erasedAt === null ? {} : { personalDataErasedAt: erasedAt }) } };
    }
    return event;
  }
}
