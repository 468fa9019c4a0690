import type { LogRecord } from './event-log.js';

/** A server-side $all filter, as EventStoreDB evaluates it (EventFilter.cs, `isAllStream: true`). */
export interface ServerFilter {
  allows(record: Pick<LogRecord, 'streamId' | 'type'>): boolean;
}

export type FilterSpec = { readonly on: 'stream' | 'type'; readonly regex: string } | { readonly on: 'stream' | 'type'; readonly prefixes: readonly string[] };

/**
 * The rules every filtered $all read applies first: non-system streams pass, and of the system
 * streams only the epoch records and the checkpoints and parked messages of persistent subscriptions
 * to $all are held back.
 */
export function defaultAllFilterAllows(streamId: string): boolean {
  if (!streamId.startsWith('$')) return true;
  if (streamId === '$epoch-information') return false;
  if (streamId.startsWith('$persistentsubscription-$all::') && (streamId.endsWith('-checkpoint') || streamId.endsWith('-parked'))) return false;
  return true;
}

/**
 * Compiles a filter. The real server evaluates regexes with .NET (`Regex.Match`, unanchored); this
 * uses JavaScript's RegExp, which agrees on the plain expressions clients send (anchors, classes,
 * alternations, escapes) but not on every .NET construct. An expression JavaScript cannot parse is
 * refused with an error, as the real server refuses one .NET cannot.
 */
export function compileFilter(spec: FilterSpec): ServerFilter {
  const field = (record: Pick<LogRecord, 'streamId' | 'type'>) => (spec.on === 'stream' ? record.streamId : record.type);
  if ('regex' in spec) {
    const regex = new RegExp(spec.regex);
    return { allows: (record) => defaultAllFilterAllows(record.streamId) && regex.test(field(record)) };
  }
  const prefixes = [...spec.prefixes];
  return { allows: (record) => defaultAllFilterAllows(record.streamId) && prefixes.some((prefix) => field(record).startsWith(prefix)) };
}
