import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type pg from 'pg';
import { NotFound } from '../common/errors.js';
import { isoWithOffset } from '../common/time.js';
import { ContactData } from '../data-protection/contact-data.js';
import { PG_POOL } from '../database/pool.js';
import { SCOPES } from '../scopes/scopes.js';
import type { OrganizationStatus } from '../common/organization-status.js';
import { MAX_KEYS_PER_ORGANIZATION } from './organization.decider.js';
import { ORGANIZATION_ID } from './organization.store.js';
import { providersView, withOpenedEmail, type ApiKeyView, type OrganizationView } from './organization.views.js';

export const MAX_PAGE_SIZE = 100;

export interface Page<T> {
  readonly items: T[];
  readonly meta: { total: number; page: number; pageSize: number; totalPages: number };
}

export class GetOrganization extends Query<OrganizationView> {
  constructor(readonly organizationId: string) {
    super();
  }
}

export class ListOrganizations extends Query<Page<OrganizationView>> {
  constructor(
    readonly page: number,
    readonly pageSize: number,
  ) {
    super();
  }
}

export class ListApiKeys extends Query<ApiKeyView[]> {
  constructor(readonly organizationId: string) {
    super();
  }
}

interface OrganizationRow {
  id: string;
  name: string;
  email: string;
  status: OrganizationStatus;
  approved: boolean;
  active_scopes: string[];
  prices: Record<string, number | string>;
  rate_limit_per_minute: number | null;
  suspension_reason: string | null;
  providers: Record<string, unknown> | null;
  retention_days: number | null;
  personal_data_destroyed_at: Date | null;
  created_at: Date;
}

const ORGANIZATION_COLUMNS =
  'id, name, email, status, approved, active_scopes, prices, rate_limit_per_minute, suspension_reason, providers, retention_days, personal_data_destroyed_at, created_at';

function canonicalOrder(scopes: readonly string[]): string[] {
  return (SCOPES as readonly string[]).filter((scope) => scopes.includes(scope));
}

function toView(row: OrganizationRow): OrganizationView {
  const prices: Record<string, number> = {};
  for (const scope of canonicalOrder(Object.keys(row.prices))) prices[scope] = Number(row.prices[scope]);
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    status: row.status,
    approved: row.approved,
    activeScopes: canonicalOrder(row.active_scopes),
    prices,
    rateLimitPerMinute: row.rate_limit_per_minute,
    suspensionReason: row.suspension_reason,
    providers: providersView(row.providers ?? {}),
    retentionDays: row.retention_days,
    personalDataDestroyedAt: row.personal_data_destroyed_at === null ? null : isoWithOffset(row.personal_data_destroyed_at),
    createdAt: isoWithOffset(row.created_at),
  };
}

@QueryHandler(GetOrganization)
export class GetOrganizationHandler implements IQueryHandler<GetOrganization, OrganizationView> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {}

  async execute({ organizationId }: GetOrganization): Promise<OrganizationView> {
    if (!ORGANIZATION_ID.test(organizationId)) throw new NotFound('No organization with that id');
    const { rows } = await this.pool.query<OrganizationRow>(`select ${ORGANIZATION_COLUMNS} from organizations where id = $1`, [organizationId]);
    if (rows.length === 0) throw new NotFound('No organization with that id');
    return withOpenedEmail(this.contacts, toView(rows[0]));
  }
}

@QueryHandler(ListOrganizations)
export class ListOrganizationsHandler implements IQueryHandler<ListOrganizations, Page<OrganizationView>> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {}

  async execute({ page, pageSize }: ListOrganizations): Promise<Page<OrganizationView>> {
    const size = Math.min(Math.max(1, pageSize), MAX_PAGE_SIZE);
    const [{ rows }, counted] = await Promise.all([
      this.pool.query<OrganizationRow>(`select ${ORGANIZATION_COLUMNS} from organizations order by created_at desc, id desc limit $1 offset $2`, [size, (page - 1) * size]),
      this.pool.query<{ total: string }>('select count(*) as total from organizations'),
    ]);
    const total = Number(counted.rows[0].total);
    return { items: await Promise.all(rows.map((row) => withOpenedEmail(this.contacts, toView(row)))), meta: { total, page, pageSize: size, totalPages: Math.ceil(total / size) } };
  }
}

@QueryHandler(ListApiKeys)
export class ListApiKeysHandler implements IQueryHandler<ListApiKeys, ApiKeyView[]> {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  async execute({ organizationId }: ListApiKeys): Promise<ApiKeyView[]> {
    if (!ORGANIZATION_ID.test(organizationId)) throw new NotFound('No organization with that id');
    const exists = await this.pool.query('select 1 from organizations where id = $1', [organizationId]);
    if (exists.rows.length === 0) throw new NotFound('No organization with that id');
    // Never key_hash: the list shows what identifies a key to a person, nothing that authenticates.
    const { rows } = await this.pool.query<{
      id: string;
      name: string | null;
      prefix: string;
      last4: string;
      environment: string;
      scopes: string[] | null;
      created_at: Date;
      revoked_at: Date | null;
      last_used_at: Date | null;
    }>(
      `select k.id, k.name, k.prefix, k.last4, k.environment, k.scopes, k.created_at, k.revoked_at, u.last_used_at
       from api_keys k left join api_key_usage u on u.key_id = k.id
       where k.organization_id = $1 order by k.created_at, k.id limit $2`,
      [organizationId, MAX_KEYS_PER_ORGANIZATION],
    );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      prefix: row.prefix,
      last4: row.last4,
      environment: row.environment,
      scopes: row.scopes,
      createdAt: isoWithOffset(row.created_at),
      lastUsedAt: row.last_used_at === null ? null : isoWithOffset(row.last_used_at),
      revokedAt: row.revoked_at === null ? null : isoWithOffset(row.revoked_at),
    }));
  }
}

/** The organization as the console shows it: the admin API's view and when it asked for live access. */
export interface ConsoleOrganizationView extends OrganizationView {
  readonly liveAccessRequestedAt: string | null;
}

export class GetConsoleOrganization extends Query<ConsoleOrganizationView> {
  constructor(readonly organizationId: string) {
    super();
  }
}

/** The operators' console list: a search on name, email or id, a status filter, and the approval queue. */
export class SearchOrganizations extends Query<Page<ConsoleOrganizationView>> {
  constructor(
    readonly filters: { readonly search?: string; readonly status?: OrganizationStatus; readonly approvalQueue?: boolean },
    readonly page: number,
    readonly pageSize: number,
  ) {
    super();
  }
}

function consoleView(row: OrganizationRow & { live_access_requested_at: Date | null }): ConsoleOrganizationView {
  return { ...toView(row), liveAccessRequestedAt: row.live_access_requested_at === null ? null : isoWithOffset(row.live_access_requested_at) };
}

@QueryHandler(GetConsoleOrganization)
export class GetConsoleOrganizationHandler implements IQueryHandler<GetConsoleOrganization, ConsoleOrganizationView> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {}

  async execute({ organizationId }: GetConsoleOrganization): Promise<ConsoleOrganizationView> {
    if (!ORGANIZATION_ID.test(organizationId)) throw new NotFound('No organization with that id');
    const { rows } = await this.pool.query<OrganizationRow & { live_access_requested_at: Date | null }>(
      `select ${ORGANIZATION_COLUMNS}, live_access_requested_at from organizations where id = $1`,
      [organizationId],
    );
    if (rows.length === 0) throw new NotFound('No organization with that id');
    return withOpenedEmail(this.contacts, consoleView(rows[0]));
  }
}

@QueryHandler(SearchOrganizations)
export class SearchOrganizationsHandler implements IQueryHandler<SearchOrganizations, Page<ConsoleOrganizationView>> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {}

  async execute({ filters, page, pageSize }: SearchOrganizations): Promise<Page<ConsoleOrganizationView>> {
    const size = Math.min(Math.max(1, pageSize), MAX_PAGE_SIZE);
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (filters.search !== undefined && filters.search !== '') {
      params.push(`%${filters.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      // Emails are stored sealed: a whole address is found through its console users' keyed hash.
      params.push(await this.contacts.lookupKeys('email', filters.search));
      conditions.push(
        `(name ilike $${params.length - 1} or id ilike $${params.length - 1} or id in (select organization_id from console_users where email_key = any($${params.length}::text[])))`,
      );
    }
    if (filters.status !== undefined) {
      params.push(filters.status);
      conditions.push(`status = $${params.length}`);
    }
    if (filters.approvalQueue === true) conditions.push('live_access_requested_at is not null and not approved');
    const where = conditions.length === 0 ? '' : `where ${conditions.join(' and ')}`;
    const order = filters.approvalQueue === true ? 'live_access_requested_at, id' : 'created_at desc, id desc';
    const [{ rows }, counted] = await Promise.all([
      this.pool.query<OrganizationRow & { live_access_requested_at: Date | null }>(
        `select ${ORGANIZATION_COLUMNS}, live_access_requested_at from organizations ${where} order by ${order} limit $${params.length + 1} offset $${params.length + 2}`,
        [...params, size, (page - 1) * size],
      ),
      this.pool.query<{ total: string }>(`select count(*) as total from organizations ${where}`, params),
    ]);
    const total = Number(counted.rows[0].total);
    return {
      items: await Promise.all(rows.map((row) => withOpenedEmail(this.contacts, consoleView(row)))),
      meta: { total, page, pageSize: size, totalPages: Math.ceil(total / size) },
    };
  }
}
