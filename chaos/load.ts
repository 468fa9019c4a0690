/**
 * The chaos run's load: checks paced at a steady rate (open loop: a check is sent when it is due,
 * whatever the earlier ones are doing), spread over the organizations and over the API processes
 * that are up, as a load balancer with health checks would. Every check carries its own
 * X-Request-Id; the service keeps only its keyed hash with the events it causes (REQUEST_ID_HASH_KEY,
 * which the run holds), so the client's record of each check, answered or not, can be held against
 * what the server wrote.
 */
import type { Random } from './random.js';
import { OUTCOME_NOT_KNOWN_MESSAGE } from '../src/verifications/outcome-messages.js';

export interface Organization {
  readonly id: string;
  readonly key: string;
}

/** What the client saw of one check. */
export interface CheckRecord {
  /** The run's own label of the check (the summary's and the records' name for it). */
  readonly requestId: string;
  /** The server's request id, where the client learnt it (an answer to a check sent without an X-Request-Id of its own): the correlation id of its events. */
  serverRequestId?: string;
  readonly organization: number;
  readonly scope: string;
  readonly api: string;
  /** Milliseconds since the run began. */
  readonly sentAtMs: number;
  endedAtMs?: number;
  /** The HTTP status; undefined when no answer came (the connection broke, or it timed out). */
  status?: number;
  /** For a 201: the verification's reference, status and charged flag. For an error: its code and details.reference. */
  reference?: string;
  verificationStatus?: string;
  charged?: boolean;
  errorCode?: string;
  /**
   * A 503 whose message says the check's outcome is not known yet (docs/api.md): its completion
   * could not be read back, and it may yet be settled either way, as a check left unanswered is.
   */
  outcomeNotKnown?: boolean;
  /** Why no answer came. */
  noAnswer?: string;
}

export interface LoadOptions {
  readonly organizations: readonly Organization[];
  /** The base URLs of the API processes up at this moment. */
  readonly apis: () => readonly string[];
  readonly ratePerSecond: number;
  readonly random: Random;
  readonly runId: string;
  readonly runStartedAt: number;
  /** A check with no answer after this long is abandoned (recorded as no answer). */
  readonly requestTimeoutMs: number;
  /** Checks in flight beyond this are not sent (recorded as skipped), so a stalled service cannot pile up sockets. */
  readonly maxInFlight: number;
}

interface Check {
  readonly scope: string;
  readonly body: Record<string, string>;
}

const digits = (random: Random, count: number) => Array.from({ length: count }, () => String(random.int(10))).join('');

/**
 * A check of one of four scopes (two with a portrait), its outcome picked by the sandbox's last
 * digit: 70 % found, 10 % not found, 10 % provider failure, 10 % too slow (fails at the provider
 * timeout with the price reserved all along).
 */
export function randomCheck(random: Random): Check {
  const roll = random.next();
  const last = roll < 0.7 ? random.pick(['0', '5', '6', '7', '8', '9']) : roll < 0.8 ? '1' : roll < 0.9 ? '2' : '3';
  const kind = random.next();
  if (kind < 0.4) return { scope: 'nin', body: { nin: `${digits(random, 10)}${last}` } };
  if (kind < 0.65) return { scope: 'bvn', body: { bvn: `22${digits(random, 8)}${last}` } };
  if (kind < 0.8) return { scope: 'phone', body: { phone: `0803${digits(random, 6)}${last}` } };
  return { scope: 'bank_account', body: { bank: '058', account_number: `${digits(random, 9)}${last}` } };
}

export class Load {
  readonly records: CheckRecord[] = [];
  /** Due but not sent: no API up, or too many in flight. */
  skipped = 0;
  private inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private sent = 0;

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    const startedAt = performance.now();
    const intervalMs = 1_000 / this.options.ratePerSecond;
    const tick = () => {
      if (this.stopped) return;
      const now = performance.now();
      while (startedAt + this.sent * intervalMs <= now) {
        this.send(this.sent);
        this.sent += 1;
      }
      this.timer = setTimeout(tick, Math.max(0, startedAt + this.sent * intervalMs - performance.now()));
    };
    tick();
  }

  /** Sends nothing more, and waits for every check in flight to be answered or abandoned. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private send(index: number): void {
    const { organizations, random } = this.options;
    const apis = this.options.apis();
    if (apis.length === 0 || this.inFlight.size >= this.options.maxInFlight) {
      this.skipped += 1;
      return;
    }
    const organization = index % organizations.length;
    const check = randomCheck(random);
    const api = random.pick(apis);
    const record: CheckRecord = {
      requestId: `chaos-${this.options.runId}-${index}`,
      organization,
      scope: check.scope,
      api,
      sentAtMs: Date.now() - this.options.runStartedAt,
    };
    this.records.push(record);
    const done = this.call(record, organizations[organization].key, check).finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
  }

  private async call(record: CheckRecord, key: string, check: Check): Promise<void> {
    try {
      const response = await fetch(`${record.api}/v1/${check.scope}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-key': key, 'x-request-id': record.requestId },
        body: JSON.stringify(check.body),
        signal: AbortSignal.timeout(this.options.requestTimeoutMs),
      });
      const text = await response.text();
      record.status = response.status;
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        record.errorCode = 'not_json';
      }
      if (response.status === 201) {
        record.reference = body?.data?.reference;
        record.verificationStatus = body?.data?.status;
        record.charged = body?.data?.charged;
      } else {
        record.errorCode ??= body?.error?.code;
        record.reference = body?.error?.details?.reference;
        record.outcomeNotKnown = response.status === 503 && body?.error?.message === OUTCOME_NOT_KNOWN_MESSAGE;
      }
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      record.noAnswer = cause?.code ?? cause?.message ?? (error as Error).name;
    } finally {
      record.endedAtMs = Date.now() - this.options.runStartedAt;
    }
  }
}
