import { CATEGORIES } from '../../src/common/streams.js';
import { occurredAt, textField } from '../../src/common/event.js';
import type { JsonObject, RecordedEvent } from '../../src/event-store/event-store.port.js';
import { eachEvent, type Projection, type ProjectionContext } from '../projection.js';
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
  handle: eachEvent(async (event: RecordedEvent, context: ProjectionContext): Promise<void> => {
    const at = occurredAt(event);
    const log: LogEvent = { id: event.id, type: event.type, data: event.data, occurredAt: at };
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
      case 'VerificationRequested':
        await remember(context, `verification:${textField(data, 'reference')}`, {
          organizationId: textField(data, 'organizationId'),
          environment: textField(data, 'environment'),
          scope: textField(data, 'scope'),
        });
        return;
      case 'ApiKeyIssued':
        await remember(context, `key:${textField(data, 'keyId')}`, { organizationId: textField(data, 'organizationId'), environment: textField(data, 'environment'), scope: null });
        await deliver(context, webhookMessageFor(log), event);
        return;
      case 'VerificationCompleted':
      case 'VerificationFailed':
      case 'VerificationPersonalDataErased':
        await deliver(context, webhookMessageFor(log, await recall(context, `verification:${textField(data, 'reference')}`)), event);
        return;
      case 'ApiKeyRevoked':
        await deliver(context, webhookMessageFor(log, await recall(context, `key:${textField(data, 'keyId')}`)), event);
        return;
      case 'WalletFunded':
        await deliver(context, webhookMessageFor(log), event);
        await moveBalance(context, event, log, balanceChangeKobo(event.type, Number(data.amountKobo)));
        return;
      case 'WalletDebited':
        await moveBalance(context, event, log, balanceChangeKobo(event.type, Number(data.amountKobo)));
        return;
      default:
        await deliver(context, webhookMessageFor(log), event);
    }
  }),
};

async function remember(context: ProjectionContext, key: string, facts: StreamFacts): Promise<void> {
  await context.query(`insert into ${context.table('webhook_stream_facts')} (key, organization_id, environment, scope) values ($1, $2, $3, $4) on conflict (key) do nothing`, [
    key,
    facts.organizationId,
    facts.environment,
    facts.scope,
  ]);
}

async function recall(context: ProjectionContext, key: string): Promise<StreamFacts | undefined> {
  const rows = await context.query<{ organization_id: string; environment: string; scope: string | null }>(
    `select organization_id, environment, scope from ${context.table('webhook_stream_facts')} where key = $1`,
    [key],
  );
  return rows.length === 0 ? undefined : { organizationId: rows[0].organization_id, environment: rows[0].environment, scope: rows[0].scope };
}

/** One pending delivery per endpoint of the message's organization (and environment) that wants its type; a replay adds none. */
async function deliver(context: ProjectionContext, message: WebhookMessage | null, event: RecordedEvent): Promise<void> {
  if (message === null) return;
  const at = occurredAt(event);
  await context.query(
    `insert into ${context.table('webhook_deliveries')} (endpoint_id, message_id, event_type, organization_id, environment, body, occurred_at, created_at, status, attempts, next_attempt_at)
     select e.id, $1, $2, $3, e.environment, $5, $6, $6, 'pending', 0, $6
       from ${context.table('webhook_endpoints')} e
      where e.organization_id = $3 and ($4::text is null or e.environment = $4) and e.enabled and e.deleted_at is null
        and (cardinality(e.event_types) = 0 or $2 = any(e.event_types))
     on conflict (endpoint_id, message_id) do nothing`,
    [message.id, message.type, message.organizationId, message.environment, JSON.stringify(message.body), at],
  );
}

/**
 * Follows a wallet's balance (funded minus debited) to announce its downward crossings of the
 * threshold: the webhook, and a mail to the organization's owner and finance users, both in this
 * transaction, so each crossing is announced once. Guarded by the wallet's revision: a replayed
 * event moves nothing.
 */
async function moveBalance(context: ProjectionContext, event: RecordedEvent, log: LogEvent, deltaKobo: number): Promise<void> {
  const organizationId = textField(event.data, 'organizationId');
  const environment = textField(event.data, 'environment');
  if (!Number.isSafeInteger(deltaKobo)) throw new Error(`invariant: ${event.type} carries a whole amount`);
  const table = context.table('webhook_wallet_alerts');
  const rows = await context.query<{ before: string; threshold_kobo: string | null }>(
    `with before as (select balance_kobo from ${table} where organization_id = $1 and environment = $2)
     insert into ${table} as w (organization_id, environment, balance_kobo, revision) values ($1, $2, $3, $4)
     on conflict (organization_id, environment) do update set balance_kobo = w.balance_kobo + $3, revision = $4 where w.revision < $4
     returning coalesce((select balance_kobo from before), 0) as before, w.threshold_kobo`,
    [organizationId, environment, deltaKobo, event.revision.toString()],
  );
  if (rows.length === 0) return;
  const beforeKobo = Number(rows[0].before);
  const afterKobo = beforeKobo + deltaKobo;
  const thresholdKobo = rows[0].threshold_kobo === null ? null : Number(rows[0].threshold_kobo);
  if (thresholdKobo === null || !lowBalanceCrossed(beforeKobo, afterKobo, thresholdKobo)) return;
  if (environment !== 'test' && environment !== 'live') throw new Error('invariant: a wallet is test or live');
  await deliver(context, lowBalanceMessage(log, organizationId, environment, afterKobo, thresholdKobo), event);
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
