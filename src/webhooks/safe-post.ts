import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isForbiddenAddress } from './target-address.js';

/** The most of a receiver's answer that is kept (and read): an excerpt for the integrator, no more. */
export const RESPONSE_EXCERPT_BYTES = 1_024;

export interface PostPolicy {
  /** Loopback, private and link-local targets, and plain http, allowed (embedded default, WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  readonly allowPrivateTargets: boolean;
  readonly timeoutMs: number;
}

/** Resolves a host name to its addresses; a port, so tests and operators could swap DNS. */
export type Resolve = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export type PostErrorCode = 'invalid_url' | 'plain_http_refused' | 'target_refused' | 'dns_failed' | 'timeout' | 'connection_failed';

export interface PostResult {
  /** HTTP status, null when no answer came. */
  readonly statusCode: number | null;
  readonly errorCode: PostErrorCode | null;
  /** At most RESPONSE_EXCERPT_BYTES of the answer's body, as text. */
  readonly excerpt: string | null;
  readonly latencyMs: number;
}

/** What a URL must be to be an endpoint at all (checked when it is set, and again when sent to). */
export function targetUrlProblem(value: string, policy: Pick<PostPolicy, 'allowPrivateTargets'>): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.protocol === 'http:' && !policy.allowPrivateTargets) return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (url.hash !== '') return 'must not carry a fragment';
  if (value.length > 2_000) return 'must be at most 2000 characters';
  return null;
}

/**
 * POSTs a signed webhook: the host resolved now, every address it resolves to checked (one
 * refused address refuses the target: a name that also points inside is not trusted), the
 * connection pinned to the checked address (so a second resolution cannot swap it for another),
 * no redirect followed (a 3xx is an answer like any other non-2xx), the whole exchange bounded by
 * the timeout, and no more of the answer read than its excerpt. Neither the body sent nor the
 * answer is logged here.
 */
export async function safePost(target: string, headers: Record<string, string>, body: string, policy: PostPolicy, resolve: Resolve = systemResolve): Promise<PostResult> {
  const started = performance.now();
  const done = (result: Omit<PostResult, 'latencyMs'>): PostResult => ({ ...result, latencyMs: Math.round(performance.now() - started) });
  const problem = targetUrlProblem(target, policy);
  if (problem !== null) return done({ statusCode: null, errorCode: problem.includes('https') ? 'plain_http_refused' : 'invalid_url', excerpt: null });
  const url = new URL(target);
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;

  let pinned: { address: string; family: number };
  try {
    const addresses = isIP(hostname) === 0 ? await resolve(hostname) : [{ address: hostname, family: isIP(hostname) }];
    if (addresses.length === 0) return done({ statusCode: null, errorCode: 'dns_failed', excerpt: null });
    if (!policy.allowPrivateTargets && addresses.some(({ address }) => isForbiddenAddress(address))) return done({ statusCode: null, errorCode: 'target_refused', excerpt: null });
    pinned = addresses[0];
  } catch {
    return done({ statusCode: null, errorCode: 'dns_failed', excerpt: null });
  }

  const lookup: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((settle) => {
    let settled = false;
    const finish = (result: Omit<PostResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      settle(done(result));
    };
    const request = transport.request(
      url,
      {
        method: 'POST',
        lookup,
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), 'user-agent': 'ledger-webhooks/1' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const answer = () => finish({ statusCode: response.statusCode ?? null, errorCode: null, excerpt: Buffer.concat(chunks).toString('utf8') });
        response.on('data', (chunk: Buffer) => {
          if (kept >= RESPONSE_EXCERPT_BYTES) return;
          const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept);
          chunks.push(part);
          kept += part.length;
          // Enough read: the rest of the answer is not wanted.
          if (kept >= RESPONSE_EXCERPT_BYTES) answer();
        });
        response.on('end', answer);
        response.on('error', answer);
      },
    );
    const timer = setTimeout(() => finish({ statusCode: null, errorCode: 'timeout', excerpt: null }), policy.timeoutMs);
    request.on('error', () => finish({ statusCode: null, errorCode: 'connection_failed', excerpt: null }));
    request.end(body);
  });
}
