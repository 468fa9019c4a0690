import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface StubRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** What the stub does with one request. */
export type StubBehaviour =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'raw'; readonly status: number; readonly body: string }
  | { readonly kind: 'slow'; readonly delayMs: number; readonly status: number; readonly body: unknown }
  | { readonly kind: 'reset' };

export const json = (status: number, body: unknown): StubBehaviour => ({ kind: 'json', status, body });
export const raw = (status: number, body: string): StubBehaviour => ({ kind: 'raw', status, body });
export const slow = (delayMs: number, body: unknown = {}): StubBehaviour => ({ kind: 'slow', delayMs, status: 200, body });
export const reset: StubBehaviour = { kind: 'reset' };

/**
 * A local HTTP server standing in for an upstream (port 0, loopback). Each request gets the next
 * queued behaviour, else the default; every request is recorded for assertions on its shape.
 */
export class UpstreamStub {
  readonly requests: StubRequest[] = [];
  private readonly queue: StubBehaviour[] = [];
  private readonly sockets = new Set<Socket>();
  private fallback: StubBehaviour = json(500, { error: 'no behaviour set' });

  private constructor(private readonly server: Server) {}

  static async start(): Promise<UpstreamStub> {
    let stub: UpstreamStub | undefined;
    const server = createServer((request, response) => void stub?.handle(request, response));
    stub = new UpstreamStub(server);
    server.on('connection', (socket) => {
      stub?.sockets.add(socket);
      socket.on('close', () => stub?.sockets.delete(socket));
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    return stub;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Every later request, unless one is queued. */
  always(behaviour: StubBehaviour): this {
    this.fallback = behaviour;
    return this;
  }

  /** The next requests, in order. */
  next(...behaviours: StubBehaviour[]): this {
    this.queue.push(...behaviours);
    return this;
  }

  clear(): void {
    this.requests.length = 0;
    this.queue.length = 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    this.requests.push({ method: request.method ?? '', url: new URL(request.url ?? '/', this.baseUrl), headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
    const behaviour = this.queue.shift() ?? this.fallback;
    switch (behaviour.kind) {
      case 'reset':
        request.socket.destroy();
        return;
      case 'raw':
        response.writeHead(behaviour.status, { 'content-type': 'application/json' }).end(behaviour.body);
        return;
      case 'slow':
        await new Promise((wake) => setTimeout(wake, behaviour.delayMs));
        if (!response.destroyed) response.writeHead(behaviour.status, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour.body));
        return;
      case 'json':
        response.writeHead(behaviour.status, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour.body));
        return;
      default: {
        const _exhaustive: never = behaviour;
        throw new Error(`invariant: unknown stub behaviour ${String(_exhaustive)}`);
      }
    }
  }
}
