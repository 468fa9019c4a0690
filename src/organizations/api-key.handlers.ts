import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type pg from 'pg';
import { InvariantViolated, NotFound } from '../common/errors.js';
import { IdGenerator } from '../common/ids.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { generateApiKey } from '../auth/api-key.js';
import { IssueApiKey, RevokeApiKey } from './organization.commands.js';
import { KEY_ID, OrganizationStore } from './organization.store.js';
import { apiKeyView, type ApiKeyView, type IssuedApiKeyView } from './organization.views.js';

/** How far back the event log is searched for a key the api-keys read model does not hold yet. */
const RECENT_KEYS_SCANNED = 1_000;

@CommandHandler(IssueApiKey)
export class IssueApiKeyHandler implements ICommandHandler<IssueApiKey, IssuedApiKeyView> {
  constructor(
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
  ) {}

  async execute({ organizationId, input, context, options }: IssueApiKey): Promise<IssuedApiKeyView> {
    const keyId = this.ids.keyId();
    const generated = generateApiKey(input.environment, this.ids);
    const { state } = await this.organizations.execute(
      organizationId,
      {
        type: 'IssueApiKey',
        keyId,
        environment: input.environment,
        name: input.name,
        scopes: input.scopes,
        keyHash: generated.keyHash,
        prefix: generated.prefix,
        last4: generated.last4,
      },
      context,
      options,
      // The key is shown this once: answering with it beats a 503 that loses it, and a new key takes nothing away.
      'answer',
    );
    const issued = state.keys.get(keyId);
    if (issued === undefined) throw new InvariantViolated('an issued key is missing from its organization');
    const view = apiKeyView(issued);
    return {
      id: view.id,
      key: generated.key,
      name: view.name,
      prefix: view.prefix,
      last4: view.last4,
      environment: view.environment,
      scopes: view.scopes,
      createdAt: view.createdAt,
    };
  }
}

/**
 * Revocation reaches every instance when the api-keys projection applies ApiKeyRevoked (normally
 * milliseconds); the HTTP answer waits for that, up to OPERATOR_CHANGE_WAIT_MS (10 s by default).
 */
@CommandHandler(RevokeApiKey)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKey, ApiKeyView> {
  constructor(
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  async execute({ keyId, context, options }: RevokeApiKey): Promise<ApiKeyView> {
    const organizationId = await this.organizationOf(keyId);
    const { state } = await this.organizations.execute(organizationId, { type: 'RevokeApiKey', keyId }, context, options);
    const key = state.keys.get(keyId);
    if (key === undefined) throw new InvariantViolated('a revoked key is missing from its organization');
    const { rows } = await this.pool.query<{ last_used_at: Date }>('select last_used_at from api_key_usage where key_id = $1', [keyId]);
    return apiKeyView(key, rows[0]?.last_used_at ?? null);
  }

  /** The read model knows every key it has applied; a key issued a moment ago (or with no projections running) is found in the log. */
  private async organizationOf(keyId: string): Promise<string> {
    if (!KEY_ID.test(keyId)) throw new NotFound('No API key with that id');
    const { rows } = await this.pool.query<{ organization_id: string }>('select organization_id from api_keys where id = $1', [keyId]);
    if (rows.length > 0) return rows[0].organization_id;
    const recent = await this.store.readAll({ direction: 'backwards', maxCount: RECENT_KEYS_SCANNED, filter: { eventTypes: ['ApiKeyIssued'] } });
    const issued = recent.find((event) => event.data.keyId === keyId);
    if (issued === undefined || typeof issued.data.organizationId !== 'string') throw new NotFound('No API key with that id');
    return issued.data.organizationId;
  }
}
