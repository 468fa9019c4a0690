/** Conversions between the log and EventStoreDB's protobuf messages, as the real server makes them (Streams.Read.cs, Streams.Append.cs). */
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { UUID } from '@eventstore/db-client/generated/shared_pb.js';
import type { ReadResp } from '@eventstore/db-client/generated/streams_pb.js';
import type { LogRecord } from './event-log.js';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class BadRequestError extends Error {}

function signed64(hex: string): string {
  return BigInt.asIntN(64, BigInt(`0x${hex}`)).toString(10);
}

function hex64(value: string): string {
  return BigInt.asUintN(64, BigInt(value)).toString(16).padStart(16, '0');
}

/** Either form of the wire UUID to the canonical lower-case string (.NET `Guid.ToString()`). */
export function parseUuid(uuid: UUID | undefined): string {
  if (uuid === undefined) throw new BadRequestError('an event id is required');
  let text: string;
  if (uuid.hasStructured()) {
    const structured = uuid.getStructured() as UUID.Structured;
    const hex = hex64(structured.getMostSignificantBits()) + hex64(structured.getLeastSignificantBits());
    text = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  } else {
    text = uuid.getString().toLowerCase();
  }
  if (!UUID_PATTERN.test(text)) throw new BadRequestError('an event id is not a UUID');
  return text;
}

/** The structured form carries the two halves of the canonical string as signed 64-bit integers. */
export function toWireUuid(id: string, structured: boolean): UUID {
  const uuid = new sharedPb.UUID();
  if (!structured) return uuid.setString(id);
  const hex = id.replace(/-/g, '');
  const value = new sharedPb.UUID.Structured();
  value.setMostSignificantBits(signed64(hex.slice(0, 16)));
  value.setLeastSignificantBits(signed64(hex.slice(16)));
  return uuid.setStructured(value);
}

export function streamIdentifier(streamId: string) {
  const identifier = new sharedPb.StreamIdentifier();
  identifier.setStreamName(Buffer.from(streamId, 'utf8'));
  return identifier;
}

export function readStreamName(identifier: { getStreamName_asU8(): Uint8Array } | undefined): string {
  if (identifier === undefined) throw new BadRequestError('a stream identifier is required');
  const name = Buffer.from(identifier.getStreamName_asU8()).toString('utf8');
  if (name.length === 0) throw new BadRequestError('a stream name is required');
  return name;
}

/**
 * A recorded event as a read or a subscription sends it. Every event of this log is self-committed,
 * so both positions are the record's and the read event carries it as its commit position.
 */
export function readEventResponse(record: LogRecord, structuredUuid: boolean): ReadResp {
  const recorded = new streamsPb.ReadResp.ReadEvent.RecordedEvent();
  recorded.setId(toWireUuid(record.id, structuredUuid));
  recorded.setStreamIdentifier(streamIdentifier(record.streamId));
  recorded.setStreamRevision(record.revision.toString(10));
  recorded.setCommitPosition(record.position.toString(10));
  recorded.setPreparePosition(record.position.toString(10));
  const metadata = recorded.getMetadataMap();
  metadata.set('type', record.type);
  metadata.set('created', record.createdTicks.toString(10));
  metadata.set('content-type', record.isJson ? 'application/json' : 'application/octet-stream');
  recorded.setData(record.data);
  recorded.setCustomMetadata(record.metadata);
  const event = new streamsPb.ReadResp.ReadEvent();
  event.setEvent(recorded);
  event.setCommitPosition(record.position.toString(10));
  return new streamsPb.ReadResp().setEvent(event);
}

export function confirmationResponse(subscriptionId: string): ReadResp {
  const confirmation = new streamsPb.ReadResp.SubscriptionConfirmation();
  confirmation.setSubscriptionId(subscriptionId);
  return new streamsPb.ReadResp().setConfirmation(confirmation);
}

export function checkpointResponse(commit: bigint, prepare: bigint): ReadResp {
  const checkpoint = new streamsPb.ReadResp.Checkpoint();
  checkpoint.setCommitPosition(commit.toString(10));
  checkpoint.setPreparePosition(prepare.toString(10));
  return new streamsPb.ReadResp().setCheckpoint(checkpoint);
}

export function caughtUpResponse(): ReadResp {
  return new streamsPb.ReadResp().setCaughtUp(new streamsPb.ReadResp.CaughtUp());
}

export function streamNotFoundResponse(streamId: string): ReadResp {
  const notFound = new streamsPb.ReadResp.StreamNotFound();
  notFound.setStreamIdentifier(streamIdentifier(streamId));
  return new streamsPb.ReadResp().setStreamNotFound(notFound);
}
