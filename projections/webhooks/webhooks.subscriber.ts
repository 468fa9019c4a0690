import { CATEGORIES } from '../../src/common/streams.js';
import { occurredAt, textField } from '../../src/common/event.js';
import type { JsonObject, RecordedEvent } from '../../src/event-store/event-store.port.js';
import type { Projection, ProjectionContext } from '../projection.js';
import { WEBHOOK_CATEGORIES } from '../../src/webhooks/webhook-endpoint.events.js';
import { balanceChangeKobo } from '../../src/wallets/money.rule.js';
import { VERIFICATION_SESSION_CATEGORY } from '../../src/verification-flows/verification-session.events.js';
import { lowBalanceCrossed, lowBalanceMessage, webhookMessageFor, type LogEvent, type StreamFacts, type WebhookMessage } from './webhook-messages.js';

import { WEBHOOKS_SUBSCRIBER as NAME } from '../../src/webhooks/webhook.read-model.js';

export const WEBHOOKS_SUBSCRIBER = NAME;
const TABLES = ['webhook_endpoints', 'webhook_stream_facts', 'webhook_wallet_alerts', 'webhook_deliveries'] as const;
/** Console users who hear of a wallet running low. */
const LOW_BALANCE_ROLES = ['owner', 'finance'];

/**
 * The log's subscriber that turns events into deliveries. It runs like a projection (its own
 * checkpoint, one active instance through the projections' advisory lock, standbys elsewhere) and
 * writes each event's deliveries, one row per endpoint that wants it, in the transaction that moves
 * its checkpoint. That is the reason for a table of deliveries rather than a stream per endpoint:
 * the checkpoint and the deliveries commit together, so a crash anywhere leaves either both or
 * neither, and no event is announced twice or lost; a stream per endpoint would be a second write
 * to another store after the checkpoint's, with a window where a crash loses or repeats it. The
 * table is also what the sender claims with row locks and what the API lists attempts from.
 *
 * It keeps its own copy of the endpoints, from their stream, rather than reading another
 * projection's: in the order of the log, an endpoint receives exactly the events after its
 * creation, whatever the lag of any read model. It is not rebuildable (not in PROJECTIONS): a
 * rebuild would lose the deliveries' state and send the whole history again.
 */
export const webhooksSubscriber: Projection = {
  name: WEBHOOKS_SUBSCRIBER,
  categories: [WEBHOOK_CATEGORIES.endpoint, WEBHOOK_CATEGORIES.walletAlert, CATEGORIES.verification, CATEGORIES.wallet, CATEGORIES.organization, VERIFICATION_SESSION_CATEGORY],
  tables: TABLES,
  /**
   * A batch in a few statements, whatever its size: the events between two changes of an endpoint
   * or a threshold form a run, whose facts, wallet balances and deliveries are each written by one
   * statement (a check is four events here: one round trip each made the subscriber the slowest
   * part of a delivery under load). Endpoint and threshold changes split the runs and apply alone,
   * so every event's deliveries go to the endpoints as they were at that event, as one by one.
   */
  handle: async (events: readonly RecordedEvent[], context: ProjectionContext): Promise<void> => {
    let run = new Run();
    for (const event of events) {
      if (ALONE.has(event.type)) {
        await run.write(context);
        run = new Run();
        await applyAlone(event, context);
      } else run.add(event);
    }
    await run.write(context);
  },
};

/** Events that change what later events' deliveries go to, or the threshold they are judged by: applied alone, between runs. */
const ALONE = new Set([
  'WebhookEndpointCreated',
  'WebhookEndpointUpdated',
  'WebhookEndpointSecretRotated',
  'WebhookEndpointDisabled',
  'WebhookEndpointDeleted',
  'LowBalanceThresholdSet',
]);

async function applyAlone(event: RecordedEvent, context: ProjectionContext): Promise<void> {
  const at = occurredAt(event);
  const data = event.data;
  switch (event.type) {
    case 'WebhookEndpointCreated':
      await context.query(
        `insert into ${context.table('webhook_endpoints')} (id, organization_id, environment, target, master_key_id, event_types, enabled, secrets, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) on conflict (id) do nothing`,
        [
          data.endpointId,
          data.organizationId,
          data.environment,
          data.target,
          data.masterKeyId,
          data.eventTypes,
          data.enabled,
          JSON.stringify([{ secretId: data.secretId, secret: data.secret, masterKeyId: data.masterKeyId, validUntil: null }]),
          at,
        ],
      );
      return;
    case 'WebhookEndpointUpdated':
      await context.query(
        `update ${context.table('webhook_endpoints')}
            set target = coalesce($2, target), master_key_id = coalesce($3, master_key_id), event_types = coalesce($4, event_types),
                enabled = coalesce($5, enabled), disabled_reason = case when $5 then null else disabled_reason end, updated_at = $6
          where id = $1`,
        [data.endpointId, data.target ?? null, data.masterKeyId ?? null, data.eventTypes ?? null, data.enabled ?? null, at],
      );
      return;
    case 'WebhookEndpointSecretRotated':
      // The new secret, and the previous one until the end of the overlap; any older one is gone.
      await context.query(
        `update ${context.table('webhook_endpoints')}
            set secrets = jsonb_build_array($2::jsonb) || coalesce((select jsonb_agg(s || jsonb_build_object('validUntil', $4::text)) from jsonb_array_elements(secrets) s where s->>'secretId' = $3), '[]'::jsonb),
                updated_at = $5
          where id = $1 and secrets->0->>'secretId' = $3`,
        [
          data.endpointId,
          JSON.stringify({ secretId: data.secretId, secret: data.secret, masterKeyId: data.masterKeyId, validUntil: null }),
          data.previousSecretId,
          data.previousValidUntil,
          at,
        ],
      );
      return;
    case 'WebhookEndpointDisabled':
      await context.query(`update ${context.table('webhook_endpoints')} set enabled = false, disabled_reason = $2, updated_at = $3 where id = $1`, [
        data.endpointId,
        data.reason,
        at,
      ]);
      return;
    case 'WebhookEndpointDeleted':
      await context.query(`update ${context.table('webhook_endpoints')} set enabled = false, deleted_at = $2, updated_at = $2 where id = $1`, [data.endpointId, at]);
      return;
    case 'LowBalanceThresholdSet':
      await context.query(
        `insert into ${context.table('webhook_wallet_alerts')} (organization_id, environment, threshold_kobo) values ($1, $2, $3)
         on conflict (organization_id, environment) do update set threshold_kobo = excluded.threshold_kobo`,
        [data.organizationId, data.environment, data.thresholdKobo],
      );
      return;
    default:
      throw new Error(`invariant: ${event.type} is not applied alone`);
  }
}

/** A message to deliver, once the facts it needs (`factsKey`) are known. */
interface Announcement {
  readonly log: LogEvent;
  readonly factsKey?: string;
}

/** A wallet's balance moved by one event. */
interface WalletMove {
  readonly event: RecordedEvent;
  readonly log: LogEvent;
  readonly organizationId: string;
  readonly environment: string;
  readonly deltaKobo: number;
}

/** What a wallet's row says: its balance, the last event applied to it (guards replays), its threshold. */
interface WalletAlertState {
  readonly organizationId: string;
  readonly environment: string;
  balanceKobo: number;
  revision: bigint;
  readonly thresholdKobo: number | null;
  changed: boolean;
}

/** A run of events between endpoint and threshold changes: gathered in order, then written in a few statements. */
class Run {
  /** Facts remembered in this run, first one kept per key (as the table's `on conflict do nothing`). */
  private readonly facts = new Map<string, StreamFacts>();
  private readonly announcements: Announcement[] = [];
  private readonly moves: WalletMove[] = [];

  add(event: RecordedEvent): void {
    const log: LogEvent = { id: event.id, type: event.type, data: event.data, occurredAt: occurredAt(event) };
    const data = event.data;
    switch (event.type) {
      case 'VerificationRequested':
        this.remember(`verification:${textField(data, 'reference')}`, {
          organizationId: textField(data, 'organizationId'),
          environment: textField(data, 'environment'),
          scope: textField(data, 'scope'),
        });
        return;
      case 'ApiKeyIssued':
        this.remember(`key:${textField(data, 'keyId')}`, { organizationId: textField(data, 'organizationId'), environment: textField(data, 'environment'), scope: null });
        this.announcements.push({ log });
        return;
      case 'VerificationCompleted':
      case 'VerificationFailed':
      case 'VerificationPersonalDataErased':
        this.announcements.push({ log, factsKey: `verification:${textField(data, 'reference')}` });
        return;
      case 'ApiKeyRevoked':
        this.announcements.push({ log, factsKey: `key:${textField(data, 'keyId')}` });
        return;
      case 'WalletFunded':
        this.announcements.push({ log });
        this.move(event, log, event.type);
        return;
      case 'WalletDebited':
        this.move(event, log, event.type);
        return;
      default:
        this.announcements.push({ log });
    }
  }

  private remember(key: string, facts: StreamFacts): void {
    if (!this.facts.has(key)) this.facts.set(key, facts);
  }

  private move(event: RecordedEvent, log: LogEvent, type: 'WalletFunded' | 'WalletDebited'): void {
    const deltaKobo = balanceChangeKobo(type, Number(event.data.amountKobo));
    if (!Number.isSafeInteger(deltaKobo)) throw new Error(`invariant: ${event.type} carries a whole amount`);
    this.moves.push({ event, log, organizationId: textField(event.data, 'organizationId'), environment: textField(event.data, 'environment'), deltaKobo });
  }

  async write(context: ProjectionContext): Promise<void> {
    const facts = await this.rememberAll(context);
    const messages: { message: WebhookMessage; at: Date }[] = [];
    for (const { log, factsKey } of this.announcements) {
      const message = webhookMessageFor(log, factsKey === undefined ? undefined : facts.get(factsKey));
      if (message !== null) messages.push({ message, at: log.occurredAt });
    }
    const crossings = await this.moveBalances(context);
    messages.push(...crossings.map(({ message, log }) => ({ message, at: log.occurredAt })));
    await deliverAll(context, messages);
    for (const crossing of crossings) await mailLowBalance(context, crossing);
  }

  /** Writes the run's facts, and answers them with the earlier ones its announcements need. */
  private async rememberAll(context: ProjectionContext): Promise<Map<string, StreamFacts>> {
    const table = context.table('webhook_stream_facts');
    const written = [...this.facts];
    if (written.length > 0) {
      await context.query(
        `insert into ${table} (key, organization_id, environment, scope)
         select * from unnest($1::text[], $2::text[], $3::text[], $4::text[]) on conflict (key) do nothing`,
        [written.map(([key]) => key), written.map(([, f]) => f.organizationId), written.map(([, f]) => f.environment), written.map(([, f]) => f.scope)],
      );
    }
    // What the table holds wins over this run's (a replayed request), as one by one.
    const wanted = [...new Set(this.announcements.flatMap(({ factsKey }) => (factsKey === undefined ? [] : [factsKey])))];
    const known = new Map<string, StreamFacts>();
    if (wanted.length === 0) return known;
    const rows = await context.query<{ key: string; organization_id: string; environment: string; scope: string | null }>(
      `select key, organization_id, environment, scope from ${table} where key = any($1::text[])`,
      [wanted],
    );
    for (const row of rows) known.set(row.key, { organizationId: row.organization_id, environment: row.environment, scope: row.scope });
    return known;
  }

  /**
   * Follows each wallet's balance (funded minus debited) through the run's moves in order, to find
   * its downward crossings of the threshold, and writes the balances reached. Guarded by the
   * wallet's revision: a replayed event moves nothing.
   */
  private async moveBalances(context: ProjectionContext): Promise<Crossing[]> {
    if (this.moves.length === 0) return [];
    const table = context.table('webhook_wallet_alerts');
    const walletKey = (organizationId: string, environment: string) => `${organizationId}\u0000${environment}`;
    const wallets = [...new Map(this.moves.map((move) => [walletKey(move.organizationId, move.environment), move])).values()];
    const rows = await context.query<{ organization_id: string; environment: string; balance_kobo: string; revision: string; threshold_kobo: string | null }>(
      `select w.organization_id, w.environment, w.balance_kobo, w.revision, w.threshold_kobo
         from unnest($1::text[], $2::text[]) as k(organization_id, environment)
         join ${table} w on w.organization_id = k.organization_id and w.environment = k.environment`,
      [wallets.map((move) => move.organizationId), wallets.map((move) => move.environment)],
    );
    const states = new Map<string, WalletAlertState>();
    for (const row of rows) {
      states.set(walletKey(row.organization_id, row.environment), {
        organizationId: row.organization_id,
        environment: row.environment,
        balanceKobo: Number(row.balance_kobo),
        revision: BigInt(row.revision),
        thresholdKobo: row.threshold_kobo === null ? null : Number(row.threshold_kobo),
        changed: false,
      });
    }
    const crossings: Crossing[] = [];
    for (const move of this.moves) {
      const key = walletKey(move.organizationId, move.environment);
      let state = states.get(key);
      if (state === undefined) {
        state = { organizationId: move.organizationId, environment: move.environment, balanceKobo: 0, revision: -1n, thresholdKobo: null, changed: false };
        states.set(key, state);
      }
      if (move.event.revision <= state.revision) continue;
      const beforeKobo = state.balanceKobo;
      state.balanceKobo += move.deltaKobo;
      state.revision = move.event.revision;
      state.changed = true;
      if (state.thresholdKobo === null || !lowBalanceCrossed(beforeKobo, state.balanceKobo, state.thresholdKobo)) continue;
      if (move.environment !== 'test' && move.environment !== 'live') throw new Error('invariant: a wallet is test or live');
      crossings.push({
        log: move.log,
        organizationId: move.organizationId,
        environment: move.environment,
        afterKobo: state.balanceKobo,
        thresholdKobo: state.thresholdKobo,
        message: lowBalanceMessage(move.log, move.organizationId, move.environment, state.balanceKobo, state.thresholdKobo),
      });
    }
    const changed = [...states.values()].filter((state) => state.changed);
    if (changed.length > 0) {
      await context.query(
        `insert into ${table} as w (organization_id, environment, balance_kobo, revision)
         select * from unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
         on conflict (organization_id, environment) do update set balance_kobo = excluded.balance_kobo, revision = excluded.revision where w.revision < excluded.revision`,
        [
          changed.map((state) => state.organizationId),
          changed.map((state) => state.environment),
          changed.map((state) => state.balanceKobo),
          changed.map((state) => state.revision.toString()),
        ],
      );
    }
    return crossings;
  }
}

/** A wallet's balance fell below its threshold: the webhook, and a mail to its owner and finance users. */
interface Crossing {
  readonly log: LogEvent;
  readonly organizationId: string;
  readonly environment: 'test' | 'live';
  readonly afterKobo: number;
  readonly thresholdKobo: number;
  readonly message: WebhookMessage;
}

/** One pending delivery per message and endpoint of its organization (and environment) that wants its type, in one statement; a replay adds none. */
async function deliverAll(context: ProjectionContext, messages: readonly { message: WebhookMessage; at: Date }[]): Promise<void> {
  if (messages.length === 0) return;
  await context.query(
    `insert into ${context.table('webhook_deliveries')} (endpoint_id, message_id, event_type, organization_id, environment, body, occurred_at, created_at, status, attempts, next_attempt_at)
     select e.id, m.id, m.type, m.organization_id, e.environment, m.body, m.at, m.at, 'pending', 0, m.at
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) as m(id, type, organization_id, environment, body, at)
       join ${context.table('webhook_endpoints')} e
         on e.organization_id = m.organization_id and (m.environment is null or e.environment = m.environment) and e.enabled and e.deleted_at is null
        and (cardinality(e.event_types) = 0 or m.type = any(e.event_types))
     on conflict (endpoint_id, message_id) do nothing`,
    [
      messages.map(({ message }) => message.id),
      messages.map(({ message }) => message.type),
      messages.map(({ message }) => message.organizationId),
      messages.map(({ message }) => message.environment),
      messages.map(({ message }) => JSON.stringify(message.body)),
      messages.map(({ at }) => at),
    ],
  );
}

/** The crossing's mail to the organization's owner and finance users, in the batch's transaction: once per crossing. */
async function mailLowBalance(context: ProjectionContext, crossing: Crossing): Promise<void> {
  const { organizationId, environment, afterKobo, thresholdKobo, log } = crossing;
  await context.query(
    `insert into console_outbox (recipient, subject, body, link, created_at)
     select 'user:' || id, $3, $4, $6, $5 from console_users where kind = 'integrator' and organization_id = $1 and role = any($2::text[])`,
    [
      organizationId,
      LOW_BALANCE_ROLES,
      `Your ${environment} wallet is running low`,
      `The balance of your ${environment} wallet fell below ${formatNaira(thresholdKobo)}: it is ${formatNaira(afterKobo)}. Top it up to keep running checks: ${TOP_UP_LINK}`,
      log.occurredAt,
      TOP_UP_LINK,
    ],
  );
}

/** The wallet page's Top up, relative: the outbox makes it absolute with the console's address when it sends the mail. */
const TOP_UP_LINK = '/console/wallet';

function formatNaira(kobo: number): string {
  return `NGN ${(kobo / 100).toFixed(2)}`;
}

/** For the unused-binding check: the JSON shape of a stored secret. */
export interface StoredSecret extends JsonObject {
  secretId: string;
  secret: string;
  masterKeyId: string;
  validUntil: string | null;
}
