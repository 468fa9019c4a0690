/**
 * An open-loop load at a steady rate: request i is due at start + i / rate, and is sent then, or as
 * soon as one of at most `connections` keep-alive connections is free, whether or not earlier
 * ones have answered. Latency is measured from the moment the request was due, so a stalled
 * service cannot hide its backlog (no coordinated omission).
 *
 * Why not autocannon's `overallRate`: it gives each connection a quota per second and lets it send
 * the quota back to back when the second starts, so "600/s" arrives as a burst of 600 requests
 * every second, and the latency measured is that of draining the burst, not of a 600/s stream.
 *
 * Why raw sockets and not node:http: the load generator shares the machine with the service (two
 * cores), and node's HTTP client spends enough CPU per request to take a sizeable share of a core
 * at the rates measured, taken from the service it measures. Here a request is one prepared buffer written to a
 * socket, and a response is read only as far as its status line and its length, as autocannon does.
 */
import { connect, type Socket } from 'node:net';

export interface PacedLoadOptions {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly ratePerSecond: number;
  readonly seconds: number;
  readonly connections: number;
}

export interface PacedLoadResult {
  /** Answers per second over the run (until the last answer). */
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly total: number;
  /** Per second of the run (by the requests' due times): p50, p99 and max latency, to find what made a tail. */
  readonly perSecond: readonly { readonly second: number; readonly p50Ms: number; readonly p99Ms: number; readonly maxMs: number }[];
}

/** A request with no answer after this long counts as an error and its connection is replaced. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Largest response head read before giving up on a response as malformed. */
const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

function requestBytes(options: PacedLoadOptions, url: URL): Buffer {
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const lines = [`${options.method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, 'connection: keep-alive'];
  for (const [name, value] of Object.entries(options.headers)) {
    if (!['host', 'connection', 'content-length'].includes(name.toLowerCase())) lines.push(`${name}: ${value}`);
  }
  if (body !== undefined) {
    if (!Object.keys(options.headers).some((name) => name.toLowerCase() === 'content-type')) lines.push('content-type: application/json');
    lines.push(`content-length: ${body.length}`);
  }
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
  return body === undefined ? head : Buffer.concat([head, body]);
}

/**
 * Reads responses off one keep-alive connection: finds the end of the head, takes the status and
 * the body's length (content-length, or chunked transfer until its last chunk), and reports each
 * complete response. One request is in flight per connection at a time.
 */
class ResponseReader {
  private buffered: Buffer = Buffer.alloc(0);
  private status = 0;
  /** Bytes of body still to come (content-length), or -1 while reading chunks, or undefined while reading the head. */
  private remaining: number | undefined;

  constructor(private readonly onResponse: (status: number) => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.remaining === undefined) {
        const end = this.buffered.indexOf(HEAD_END);
        if (end === -1) {
          if (this.buffered.length > MAX_HEAD_BYTES) throw new Error('response head too large');
          return;
        }
        const head = this.buffered.toString('latin1', 0, end);
        this.buffered = this.buffered.subarray(end + HEAD_END.length);
        this.status = Number(head.slice(9, 12));
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (length !== null) this.remaining = Number(length[1]);
        else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) this.remaining = -1;
        else this.remaining = 0;
      }
      if (this.remaining >= 0) {
        if (this.buffered.length < this.remaining) return;
        this.buffered = this.buffered.subarray(this.remaining);
      } else {
        const last = this.buffered.indexOf('0\r\n\r\n');
        if (last === -1) return;
        this.buffered = this.buffered.subarray(last + 5);
      }
      this.remaining = undefined;
      this.onResponse(this.status);
      if (this.buffered.length === 0) return;
    }
  }
}

export async function pacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const url = new URL(options.url);
  const port = Number(url.port || 80);
  const request = requestBytes(options, url);
  const total = Math.round(options.ratePerSecond * options.seconds);
  const intervalMs = 1000 / options.ratePerSecond;
  const latencies = new Float64Array(total);
  /** Each answer's due time (ms after the start), in the order of latencies. */
  const dueOffsets = new Float64Array(total);
  let recorded = 0;
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  const startedAt = performance.now();
  let lastAnswerAt = startedAt;

  /** Due times of requests waiting for a free connection, oldest first. */
  const waiting: number[] = [];
  let waitingHead = 0;
  const idle: Connection[] = [];
  let finish: (() => void) | undefined;

  const record = (dueAt: number, ok: boolean, status: number) => {
    const now = performance.now();
    latencies[recorded] = now - dueAt;
    dueOffsets[recorded++] = dueAt - startedAt;
    if (!ok) errors += 1;
    else if (status < 200 || status > 299) non2xx += 1;
    lastAnswerAt = now;
    if (recorded === total) finish?.();
  };

  class Connection {
    private socket: Socket;
    private dueAt: number | undefined;
    private timer: NodeJS.Timeout | undefined;

    constructor() {
      this.socket = this.open();
    }

    private open(): Socket {
      const socket = connect({ host: url.hostname, port, noDelay: true });
      const reader = new ResponseReader((status) => this.answered(true, status));
      socket.on('data', (chunk: Buffer) => {
        try {
          reader.push(chunk);
        } catch {
          this.fail(socket);
        }
      });
      socket.on('error', () => this.fail(socket));
      socket.on('close', () => this.fail(socket));
      return socket;
    }

    send(dueAt: number): void {
      this.dueAt = dueAt;
      const socket = this.socket;
      this.timer = setTimeout(() => this.fail(socket), REQUEST_TIMEOUT_MS);
      socket.write(request);
    }

    private answered(ok: boolean, status: number): void {
      if (this.dueAt === undefined) return;
      clearTimeout(this.timer);
      const dueAt = this.dueAt;
      this.dueAt = undefined;
      record(dueAt, ok, status);
      if (recorded < total) release(this);
    }

    /** The socket broke (or its request timed out): the request in flight counts as an error, and a new socket takes its place. */
    private fail(socket: Socket): void {
      if (socket !== this.socket || recorded >= total) return;
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      this.socket = this.open();
      this.answered(false, 0);
    }

    close(): void {
      clearTimeout(this.timer);
      this.socket.removeAllListeners();
      this.socket.on('error', () => undefined);
      this.socket.destroy();
    }
  }

  const release = (connection: Connection) => {
    if (waitingHead < waiting.length) connection.send(waiting[waitingHead++]);
    else idle.push(connection);
  };

  const connections = Array.from({ length: options.connections }, () => new Connection());
  idle.push(...connections);

  await new Promise<void>((resolveRun) => {
    finish = resolveRun;
    const tick = () => {
      const now = performance.now();
      while (sent < total && startedAt + sent * intervalMs <= now) {
        const dueAt = startedAt + sent * intervalMs;
        sent += 1;
        const connection = idle.pop();
        if (connection !== undefined) connection.send(dueAt);
        else waiting.push(dueAt);
      }
      if (sent < total) setTimeout(tick, Math.max(0, startedAt + sent * intervalMs - performance.now()));
    };
    tick();
  });
  for (const connection of connections) connection.close();

  const seconds: number[][] = [];
  for (let i = 0; i < recorded; i += 1) (seconds[Math.floor(dueOffsets[i] / 1000)] ??= []).push(latencies[i]);
  const sorted = latencies.subarray(0, recorded).sort();
  return {
    requestsPerSecond: recorded / ((lastAnswerAt - startedAt) / 1000),
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? NaN,
    non2xx,
    errors,
    total: recorded,
    perSecond: seconds.map((values, second) => {
      const inSecond = Float64Array.from(values).sort();
      return { second, p50Ms: quantile(inSecond, 0.5), p99Ms: quantile(inSecond, 0.99), maxMs: inSecond.at(-1) ?? NaN };
    }),
  };
}

function quantile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
