/**
 * The chaos run's webhook receiver: an integrator's endpoint that misbehaves. A process of its own
 * (node dist/chaos/webhook-receiver.js), so that the run can kill -9 it and start it again as it
 * does the service's processes.
 *
 * POST /hooks/<n> is organization n's endpoint; its signing secret is read from SECRETS_FILE (the
 * run writes it once the endpoints exist, and the file is read again whenever an endpoint is not
 * known yet). Every request is recorded, before it is answered, as one JSON line appended to
 * RECORD_FILE and fsynced, so that what it accepted survives its kill: the webhook-id, the type, the
 * data's reference or fundingReference, whether the signature verified (standardwebhooks'
 * Webhook.verify) and what it answered. A request is answered 500 with probability FAIL_SHARE, held
 * past the sender's timeout and then cut with probability HOLD_SHARE (HOLD_MS), 204 otherwise. The
 * body itself is not kept: the record names references only.
 *
 * GET /health answers 200 once it listens (the run's readiness check).
 */
import { closeSync, fdatasyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver recorded it. */
export interface ReceivedDelivery {
  readonly path: string;
  readonly webhookId: string;
  readonly type: string | null;
  /** The data's reference (verifications) or fundingReference (fundings), when it has one. */
  readonly reference: string | null;
  /** The data's organizationId: a funding reference is the organization's own, not unique across them. */
  readonly organizationId: string | null;
  readonly verified: boolean;
  /** 'accepted' (answered 2xx), 'failed' (answered 500) or 'held' (cut after the sender's timeout). */
  readonly answer: 'accepted' | 'failed' | 'held';
  /** Milliseconds since the epoch, when it arrived. */
  readonly at: number;
}

/** Every complete line of a record file; a line cut by a kill (the last one) is left out. */
export function parseRecord(text: string): ReceivedDelivery[] {
  const received: ReceivedDelivery[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      received.push(JSON.parse(line) as ReceivedDelivery);
    } catch {
      // Written up to the kill: that request was never answered, so the sender tries it again.
    }
  }
  return received;
}

function share(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new Error(`${name} must be a number from 0 to 1`);
  return value;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function main(): void {
  const port = Number(process.env.PORT);
  const recordFile = process.env.RECORD_FILE;
  const secretsFile = process.env.SECRETS_FILE;
  if (!Number.isInteger(port) || recordFile === undefined || secretsFile === undefined) throw new Error('PORT, RECORD_FILE and SECRETS_FILE are required');
  const failShare = share('FAIL_SHARE', 0.1);
  const holdShare = share('HOLD_SHARE', 0.05);
  const holdMs = Number(process.env.HOLD_MS ?? 3_000);
  const record = openSync(recordFile, 'a');
  let secrets: Record<string, string> = {};
  const secretOf = (path: string): string | undefined => {
    if (secrets[path] === undefined) {
      try {
        secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;
      } catch {
        // Not written yet: the request is recorded as not verified, and answered 500 (no secret, no trust).
      }
    }
    return secrets[path];
  };

  const server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const path = request.url ?? '';
      if (request.method === 'GET' && path === '/health') {
        response.writeHead(200).end('ok');
        return;
      }
      const header = (name: string) => (typeof request.headers[name] === 'string' ? (request.headers[name] as string) : '');
      const secret = secretOf(path);
      let verified = false;
      if (secret !== undefined) {
        try {
          new Webhook(secret).verify(body, {
            'webhook-id': header('webhook-id'),
            'webhook-timestamp': header('webhook-timestamp'),
            'webhook-signature': header('webhook-signature'),
          });
          verified = true;
        } catch {
          verified = false;
        }
      }
      let type: string | null = null;
      let reference: string | null = null;
      let organizationId: string | null = null;
      try {
        const parsed = JSON.parse(body) as { type?: unknown; data?: { reference?: unknown; fundingReference?: unknown; organizationId?: unknown } };
        organizationId = typeof parsed.data?.organizationId === 'string' ? parsed.data.organizationId : null;
        type = typeof parsed.type === 'string' ? parsed.type : null;
        const found = parsed.data?.reference ?? parsed.data?.fundingReference;
        reference = typeof found === 'string' ? found : null;
      } catch {
        // Recorded with no type: verify.ts reports it.
      }
      const roll = Math.random();
      const answer: ReceivedDelivery['answer'] = !verified || roll < failShare ? 'failed' : roll < failShare + holdShare ? 'held' : 'accepted';
      const entry: ReceivedDelivery = { path, webhookId: header('webhook-id'), type, reference, organizationId, verified, answer, at: Date.now() };
      // On disk before the answer: an accepted delivery is never lost with the process.
      writeSync(record, `${JSON.stringify(entry)}\n`);
      fdatasyncSync(record);
      if (answer === 'accepted') response.writeHead(204).end();
      else if (answer === 'failed') response.writeHead(500, { 'content-type': 'text/plain' }).end('chaos: failing on purpose');
      else setTimeout(() => request.socket.destroy(), holdMs);
    })().catch(() => {
      response.writeHead(500).end();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.listen(port, '127.0.0.1');
  const close = () => {
    server.close(() => {
      closeSync(record);
      process.exit(0);
    });
    // Held requests and idle keep-alive connections would keep it open.
    server.closeAllConnections();
  };
  process.once('SIGTERM', close);
  process.once('SIGINT', close);
}

// Run as a script; imported (parseRecord) by the run and its checks.
if (process.argv[1] !== undefined && /webhook-receiver\.[jt]s$/.test(process.argv[1])) main();
