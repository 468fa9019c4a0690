import { AppError, ValidationFailed } from '../../common/errors.js';
import { groupedNaira } from '../../common/money.js';
import type { AppConfig } from '../../config/config.js';
import { ConfigError } from '../../config/config.js';
import type { ApiKeyView, OrganizationView } from '../../organizations/organization.views.js';
import { SCOPES } from '../../scopes/scopes.js';

/** 150000 → "₦1,500.00 (150,000 kobo)". */
export function nairaAndKobo(kobo: number): string {
  return `₦${groupedNaira(kobo)} (${kobo.toLocaleString('en-US')} kobo)`;
}

/** A key as a person reads it: `scopes: all` rather than a bare null. */
export function keysForPeople<T extends Pick<ApiKeyView, 'scopes'>>(key: T): Omit<T, 'scopes'> & { scopes: string | readonly string[] } {
  return { ...key, scopes: key.scopes === null ? 'all (every scope active for the organization)' : key.scopes };
}

/**
 * Each scope's effective price, the organization's override or the configured default, named as
 * such; the JSON output carries it as `effectivePrices` beside the API's `prices` (the overrides alone).
 */
export function effectivePrices(organization: Pick<OrganizationView, 'prices'>, config: AppConfig): Record<string, { priceKobo: number; source: 'override' | 'default' }> {
  const prices: Record<string, { priceKobo: number; source: 'override' | 'default' }> = {};
  for (const scope of SCOPES) {
    const override = organization.prices[scope];
    prices[scope] = override === undefined ? { priceKobo: config.verifications.pricesKobo[scope], source: 'default' } : { priceKobo: override, source: 'override' };
  }
  return prices;
}

/** An organization as a person reads it: every price with where it comes from, the rate limit's default named. */
export function organizationForPeople(organization: OrganizationView, config: AppConfig): Record<string, unknown> {
  const prices: Record<string, string> = {};
  for (const [scope, price] of Object.entries(effectivePrices(organization, config))) prices[scope] = `${nairaAndKobo(price.priceKobo)}, ${price.source}`;
  return {
    ...organization,
    activeScopes: organization.activeScopes.length === 0 ? '(none: every check is refused)' : organization.activeScopes,
    prices,
    rateLimitPerMinute: organization.rateLimitPerMinute ?? `${config.rateLimits.perMinute}, default (RATE_LIMIT_PER_MINUTE)`,
    retentionDays: organization.retentionDays ?? `${config.verifications.retentionDays}, default (PERSONAL_DATA_RETENTION_DAYS)`,
    providers: Object.keys(organization.providers).length === 0 ? '(none configured: test keys use the sandbox)' : organization.providers,
  };
}

/** The JSON form of an organization: the API's view and each scope's effective price. */
export function organizationJson(organization: OrganizationView, config: AppConfig): Record<string, unknown> {
  return { ...organization, effectivePrices: effectivePrices(organization, config) };
}

/** The human form of an answer: `name: value` lines, nested objects indented. */
export function human(value: unknown, indent = ''): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return `${indent}(none)`;
    if (value.every((item) => typeof item !== 'object' || item === null)) return `${indent}${value.join(', ')}`;
    return value.map((item) => human(item, indent)).join('\n\n');
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value as Record<string, unknown>)
      .map(([name, field]) => {
        if (Array.isArray(field))
          return `${indent}${name}: ${field.length === 0 ? '(none)' : field.every((item) => typeof item !== 'object') ? field.join(', ') : `\n${human(field, `${indent}  `)}`}`;
        if (typeof field === 'object' && field !== null) return Object.keys(field).length === 0 ? `${indent}${name}: (none)` : `${indent}${name}:\n${human(field, `${indent}  `)}`;
        return `${indent}${name}: ${field === null ? '-' : typeof field === 'string' ? field : JSON.stringify(field)}`;
      })
      .join('\n');
  }
  return `${indent}${String(value)}`;
}

/** Reports the error on stderr (the process's, unless given another) and answers the exit code. */
export function fail(error: unknown, stderr: (text: string) => void = (text) => void process.stderr.write(text)): number {
  if (error instanceof AppError) {
    stderr(`error: ${error.code}: ${error.message}\n`);
    if (error instanceof ValidationFailed) for (const field of error.fields) stderr(`  ${field.field}: ${field.message}\n`);
    else for (const [name, value] of Object.entries(error.details)) stderr(`  ${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
    return 1;
  }
  if (error instanceof ConfigError) {
    stderr(`error: config: ${error.message}\n`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  stderr(`error: failed: ${message}\n`);
  return 1;
}
