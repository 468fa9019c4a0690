import { isConnectionError } from '../database/connection-errors.js';
import { eventStoreAppendDurationSeconds } from '../metrics/metrics.js';
import {
  EventStoreUnavailableError,
  WrongExpectedRevisionError,
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type ExpectedEventIds,
  type LogReader,
  type ShortStreams,
  type EventToAppend,
  type MultiStreamAppends,
  type ReadAllOptions,
  type StreamAppend,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from './event-store.port.js';

function outcomeOf(error: unknown): 'conflict' | 'unavailable' | 'error' {
  if (error instanceof WrongExpectedRevisionError) return 'conflict';
  if (error instanceof EventStoreUnavailableError || isConnectionError(error)) return 'unavailable';
  return 'error';
}

/** The port with append latency measured (ivl_event_store_append_duration_seconds); every call passes through unchanged. */
export class InstrumentedEventStore implements EventStore {
  constructor(readonly inner: EventStore) {}

  get kind(): EventStore['kind'] {
    return this.inner.kind;
  }

  async append(streamId: string, events: readonly EventToAppend[], options: AppendOptions): Promise<AppendResult> {
    const stop = eventStoreAppendDurationSeconds.startTimer({ store: this.inner.kind });
    try {
      const result = await this.inner.append(streamId, events, options);
      stop({ outcome: 'ok' });
      return result;
    } catch (error) {
      stop({ outcome: outcomeOf(error) });
      throw error;
    }
  }

  get multiStreamAppends(): MultiStreamAppends {
    return this.inner.multiStreamAppends;
  }

  get expectedEventIds(): ExpectedEventIds {
    return this.inner.expectedEventIds;
  }

  get shortStreams(): ShortStreams {
    return this.inner.shortStreams;
  }

  get logReader(): LogReader | undefined {
    return this.inner.logReader;
  }

  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const stop = eventStoreAppendDurationSeconds.startTimer({ store: this.inner.kind });
    try {
      const results = await this.inner.appendMany(appends);
      stop({ outcome: 'ok' });
      return results;
    } catch (error) {
      stop({ outcome: outcomeOf(error) });
      throw error;
    }
  }

  readStream(streamId: string, options: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamId, options);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  subscribeToAll(options?: SubscribeOptions): Subscription {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<bigint> {
    return this.inner.headPosition();
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
