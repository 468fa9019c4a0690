import { describe, expect, it } from '@jest/globals';
import { InvariantViolated, NotFound, ValidationFailed } from '../common/errors.js';
import { givenFor } from '../event-sourcing/decider.testing.js';
import { organizationDecider, type OrganizationCommand } from './organization.decider.js';
import type { OrganizationEvent } from './organization.events.js';

const organizationId = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const at = new Date('2026-11-01T10:00:00Z');
const v = 1;

const registered = (activeScopes: string[] = ['nin', 'bvn'], sandboxCreditKobo = 500_000): OrganizationEvent => ({
  type: 'OrganizationRegistered',
  data: { schemaVersion: v, organizationId, name: 'Acme', email: 'ops@acme.test', activeScopes, sandboxCreditKobo },
});
const approved: OrganizationEvent = { type: 'OrganizationApproved', data: { schemaVersion: v, organizationId } };
const suspended: OrganizationEvent = { type: 'OrganizationSuspended', data: { schemaVersion: v, organizationId, reason: 'fraud review' } };
const keyIssued = (keyId: string): OrganizationEvent => ({
  type: 'ApiKeyIssued',
  data: { schemaVersion: v, organizationId, keyId, name: null, keyHash: 'a'.repeat(64), prefix: 'service_test_abcd', last4: 'wxyz', environment: 'test', scopes: null },
});
const keyRevoked = (keyId: string): OrganizationEvent => ({ type: 'ApiKeyRevoked', data: { schemaVersion: v, organizationId, keyId } });

const given = givenFor(organizationDecider, { occurredAt: at });

describe('organization decider', () => {
  describe('registering', () => {
    it('records the organization with its scopes in canonical order, pending', () => {
      given([])
        .when({ type: 'RegisterOrganization', organizationId, name: 'Acme', email: 'ops@acme.test', activeScopes: ['bvn', 'nin'], sandboxCreditKobo: 500_000 })
        .then([registered(['nin', 'bvn'])]);
      const state = given([registered()]).state;
      expect(state.status).toBe('pending');
      expect(state.createdAt).toEqual(at);
      expect(state.sandboxCreditKobo).toBe(500_000);
    });
    it('reads registrations recorded before the sandbox credit was as owing none (they were credited in the same request)', () => {
      const { sandboxCreditKobo: _omitted, ...older } = (registered() as Extract<OrganizationEvent, { type: 'OrganizationRegistered' }>).data;
      expect(given([{ type: 'OrganizationRegistered', data: older }]).state.sandboxCreditKobo).toBe(0);
    });
    it('fails loudly on a sandbox credit that is not whole kobo (the handler passes the configured one)', () =>
      given([])
        .when({ type: 'RegisterOrganization', organizationId, name: 'Acme', email: 'ops@acme.test', activeScopes: [], sandboxCreditKobo: -1 })
        .thenThrows(InvariantViolated));
    it('refuses unknown scopes, listing each', () =>
      given([])
        .when({ type: 'RegisterOrganization', organizationId, name: 'Acme', email: 'ops@acme.test', activeScopes: ['nin', 'x', 'y'], sandboxCreditKobo: 0 })
        .thenFieldErrors(['activeScopes[1]', 'activeScopes[2]']));
  });

  describe('commands on an organization that does not exist', () => {
    it('are not found', () => given([]).when({ type: 'ApproveOrganization' }).thenThrows(NotFound));
  });

  describe('approving', () => {
    it('approves a pending organization', () => given([registered()]).when({ type: 'ApproveOrganization' }).then([approved]));
    it('writes nothing for an approved one', () => given([registered(), approved]).when({ type: 'ApproveOrganization' }).thenNothing());
    it('keeps a suspended organization suspended while recording the approval', () => {
      given([registered(), suspended]).when({ type: 'ApproveOrganization' }).then([approved]);
      const state = given([registered(), suspended, approved]).state;
      expect([state.status, state.approved]).toEqual(['suspended', true]);
    });
  });

  describe('asking for live access (from the console)', () => {
    const requested: OrganizationEvent = { type: 'LiveAccessRequested', data: { schemaVersion: v, organizationId } };
    it('records the request once, with its time', () => {
      given([registered()]).when({ type: 'RequestLiveAccess' }).then([requested]);
      expect(given([registered(), requested]).state.liveAccessRequestedAt).toEqual(at);
    });
    it('changes nothing when asked again or once approved', () => {
      given([registered(), requested]).when({ type: 'RequestLiveAccess' }).thenNothing();
      given([registered(), approved]).when({ type: 'RequestLiveAccess' }).thenNothing();
    });
    it('refuses an organization that does not exist', () => given([]).when({ type: 'RequestLiveAccess' }).thenThrows(NotFound));
  });

  describe('suspending and reinstating', () => {
    it('suspends with the reason', () => given([registered(), approved]).when({ type: 'SuspendOrganization', reason: 'fraud review' }).then([suspended]));
    it('writes nothing when already suspended', () => given([registered(), suspended]).when({ type: 'SuspendOrganization', reason: 'again' }).thenNothing());
    it('writes nothing when reinstating an organization that is not suspended', () => given([registered(), approved]).when({ type: 'ReinstateOrganization' }).thenNothing());
    it('returns an approved organization to approved, a never-approved one to pending', () => {
      const reinstated: OrganizationEvent = { type: 'OrganizationReinstated', data: { schemaVersion: v, organizationId } };
      given([registered(), approved, suspended]).when({ type: 'ReinstateOrganization' }).then([reinstated]);
      expect(given([registered(), approved, suspended, reinstated]).state.status).toBe('approved');
      expect(given([registered(), suspended, reinstated]).state.status).toBe('pending');
      expect(given([registered(), suspended, reinstated]).state.suspensionReason).toBeNull();
    });
  });

  describe('setting the active scopes', () => {
    it('activates and deactivates only the difference', () =>
      given([registered(['nin', 'bvn'])])
        .when({ type: 'SetActiveScopes', scopes: ['bvn', 'phone'] })
        .then([
          { type: 'ScopeDeactivated', data: { schemaVersion: v, organizationId, scope: 'nin' } },
          { type: 'ScopeActivated', data: { schemaVersion: v, organizationId, scope: 'phone' } },
        ]));
    it('writes nothing for the same set', () =>
      given([registered(['nin', 'bvn'])])
        .when({ type: 'SetActiveScopes', scopes: ['bvn', 'nin', 'nin'] })
        .thenNothing());
    it('lists every unknown scope', () =>
      given([registered()])
        .when({ type: 'SetActiveScopes', scopes: ['nope', 'nin', 'zip'] })
        .thenFieldErrors(['scopes[0]', 'scopes[2]']));
  });

  describe('setting prices', () => {
    it('sets the new overrides and clears the ones left out', () => {
      const ninPrice: OrganizationEvent = { type: 'ScopePriceSet', data: { schemaVersion: v, organizationId, scope: 'nin', priceKobo: 5_000 } };
      given([registered(), ninPrice])
        .when({ type: 'SetScopePrices', pricesKobo: { bvn: 0 } })
        .then([
          { type: 'ScopePriceSet', data: { schemaVersion: v, organizationId, scope: 'nin', priceKobo: null } },
          { type: 'ScopePriceSet', data: { schemaVersion: v, organizationId, scope: 'bvn', priceKobo: 0 } },
        ]);
      given([registered(), ninPrice])
        .when({ type: 'SetScopePrices', pricesKobo: { nin: 5_000 } })
        .thenNothing();
    });
    it('refuses unknown scopes and prices that are not whole kobo in range, each listed', () =>
      given([registered()])
        .when({ type: 'SetScopePrices', pricesKobo: { nin: 1.5, bvn: -1, phone: 100_000_001, magic: 1, pnv: '100' } })
        .thenFieldErrors(['nin', 'bvn', 'phone', 'magic', 'pnv']));
  });

  describe('renaming', () => {
    const renamed = (name: string): OrganizationEvent => ({ type: 'OrganizationRenamed', data: { schemaVersion: v, organizationId, name } });
    it('records the new name without its surrounding spaces, and the state carries it', () => {
      given([registered()])
        .when({ type: 'RenameOrganization', name: '  Acme Holdings ' })
        .then([renamed('Acme Holdings')]);
      expect(given([registered(), renamed('Acme Holdings')]).state.name).toBe('Acme Holdings');
    });
    it('writes nothing when the name is already that', () =>
      given([registered(), renamed('Acme Holdings')])
        .when({ type: 'RenameOrganization', name: 'Acme Holdings' })
        .thenNothing());
    it('refuses a blank name', () => given([registered()]).when({ type: 'RenameOrganization', name: ' \t ' }).thenFieldErrors(['name']));
    it('is not found for an organization that does not exist', () => given([]).when({ type: 'RenameOrganization', name: 'Acme' }).thenThrows(NotFound));
  });

  describe('setting the rate limit', () => {
    const rateLimitSet = (requestsPerMinute: number | null): OrganizationEvent => ({ type: 'RateLimitSet', data: { schemaVersion: v, organizationId, requestsPerMinute } });
    it('records an override, and the state carries it', () => {
      given([registered()])
        .when({ type: 'SetRateLimit', requestsPerMinute: 120 })
        .then([rateLimitSet(120)]);
      expect(given([registered(), rateLimitSet(120)]).state.rateLimitPerMinute).toBe(120);
    });
    it('returns to the default with null', () => {
      given([registered(), rateLimitSet(120)])
        .when({ type: 'SetRateLimit', requestsPerMinute: null })
        .then([rateLimitSet(null)]);
      expect(given([registered(), rateLimitSet(120), rateLimitSet(null)]).state.rateLimitPerMinute).toBeNull();
    });
    it('writes nothing when the limit is already that', () =>
      given([registered(), rateLimitSet(120)])
        .when({ type: 'SetRateLimit', requestsPerMinute: 120 })
        .thenNothing());
    it('writes nothing when clearing a limit that was never set', () => given([registered()]).when({ type: 'SetRateLimit', requestsPerMinute: null }).thenNothing());
    it.each([0, -1, 1.5, 1_000_001, '60', true])('refuses %p', (requestsPerMinute) =>
      given([registered()]).when({ type: 'SetRateLimit', requestsPerMinute }).thenFieldErrors(['requestsPerMinute']),
    );
    it('is not found for an organization that does not exist', () => given([]).when({ type: 'SetRateLimit', requestsPerMinute: 60 }).thenThrows(NotFound));
  });

  describe('setting the retention period', () => {
    const retentionSet = (retentionDays: number | null): OrganizationEvent => ({ type: 'RetentionSet', data: { schemaVersion: v, organizationId, retentionDays } });
    it('records an override, and the state carries it; null returns to the default', () => {
      given([registered()])
        .when({ type: 'SetRetention', retentionDays: 365 })
        .then([retentionSet(365)]);
      expect(given([registered(), retentionSet(365)]).state.retentionDays).toBe(365);
      given([registered(), retentionSet(365)])
        .when({ type: 'SetRetention', retentionDays: null })
        .then([retentionSet(null)]);
      expect(given([registered(), retentionSet(365), retentionSet(null)]).state.retentionDays).toBeNull();
    });
    it('writes nothing when the period is already that', () =>
      given([registered(), retentionSet(365)])
        .when({ type: 'SetRetention', retentionDays: 365 })
        .thenNothing());
    it.each([0, -1, 1.5, 7301, '30', true])('refuses %p', (retentionDays) =>
      given([registered()]).when({ type: 'SetRetention', retentionDays }).thenFieldErrors(['retentionDays']),
    );
    it('is not found for an organization that does not exist', () => given([]).when({ type: 'SetRetention', retentionDays: 30 }).thenThrows(NotFound));
  });

  describe('destroying its personal data (offboarding)', () => {
    const destroyed: OrganizationEvent = { type: 'PersonalDataDestroyed', data: { schemaVersion: v, organizationId, destroyedAt: at.toISOString() } };
    it('records the destruction once, with its time', () => {
      given([registered()]).when({ type: 'DestroyPersonalData', at }).then([destroyed]);
      expect(given([registered(), destroyed]).state.personalDataDestroyedAt).toEqual(at);
      given([registered(), destroyed])
        .when({ type: 'DestroyPersonalData', at: new Date('2027-01-01T00:00:00Z') })
        .thenNothing();
    });
    it('is not found for an organization that does not exist', () => given([]).when({ type: 'DestroyPersonalData', at }).thenThrows(NotFound));
  });

  describe('keys', () => {
    const issue = (scopes: string[] | null): OrganizationCommand => ({
      type: 'IssueApiKey',
      keyId: 'key_1',
      environment: 'test',
      name: null,
      scopes,
      keyHash: 'a'.repeat(64),
      prefix: 'service_test_abcd',
      last4: 'wxyz',
    });
    it('issues a key by hash, never the key', () =>
      given([registered()])
        .when(issue(null))
        .then([keyIssued('key_1')]));
    it('refuses unknown or empty key scopes', () => {
      given([registered()])
        .when(issue(['nin', 'bogus']))
        .thenFieldErrors(['scopes[1]']);
      given([registered()]).when(issue([])).thenFieldErrors(['scopes']);
    });
    it('revokes a key once; revoking again writes nothing', () => {
      given([registered(), keyIssued('key_1')])
        .when({ type: 'RevokeApiKey', keyId: 'key_1' })
        .then([keyRevoked('key_1')]);
      given([registered(), keyIssued('key_1'), keyRevoked('key_1')])
        .when({ type: 'RevokeApiKey', keyId: 'key_1' })
        .thenNothing();
      expect(given([registered(), keyIssued('key_1'), keyRevoked('key_1')]).state.keys.get('key_1')?.revokedAt).toEqual(at);
    });
    it('does not know a key of another organization', () => given([registered()]).when({ type: 'RevokeApiKey', keyId: 'key_2' }).thenThrows(NotFound));
  });

  describe('configuring the upstream provider', () => {
    const configure = (overrides: Partial<Extract<OrganizationCommand, { type: 'ConfigureProvider' }>> = {}): OrganizationCommand => ({
      type: 'ConfigureProvider',
      environment: 'live',
      provider: 'dojah',
      credentials: 'v1.sealed',
      fallback: null,
      ...overrides,
    });
    const configured = (data: Partial<{ provider: string; fallback: string | null }> = {}): OrganizationEvent => ({
      type: 'ProviderConfigured',
      data: { schemaVersion: v, organizationId, environment: 'live', provider: 'dojah', fallback: null, credentials: 'v1.sealed', fallbackCredentials: null, ...data },
    });

    it('records the provider, its secondary and their sealed credentials', () =>
      given([registered()])
        .when(configure({ fallback: { provider: 'prembly', credentials: 'v1.other' } }))
        .then([
          {
            type: 'ProviderConfigured',
            data: { schemaVersion: v, organizationId, environment: 'live', provider: 'dojah', fallback: 'prembly', credentials: 'v1.sealed', fallbackCredentials: 'v1.other' },
          },
        ]));

    it('keeps the provider per environment in the state', () => {
      expect(given([registered(), configured({ fallback: 'prembly' })]).state.providers).toEqual({ live: { provider: 'dojah', fallback: 'prembly' } });
    });

    it('refuses a provider that cannot serve an active scope, naming the scope', () =>
      given([registered(['nin', 'pvc', 'passport'])])
        .when(configure({ provider: 'prembly' }))
        .thenThrows(ValidationFailed, (error) => expect(error.fields[0].message).toMatch(/^prembly cannot serve pvc, passport/)));

    it('refuses a fallback that cannot serve an active scope', () =>
      given([registered(['nin', 'pvc'])])
        .when(configure({ fallback: { provider: 'prembly', credentials: 'v1.other' } }))
        .thenFieldErrors(['scopes']));

    it('refuses unknown providers, missing credentials, a fallback equal to the primary or the sandbox, and upstreams for test keys', () => {
      given([registered()])
        .when(configure({ provider: 'acme' }))
        .thenFieldErrors(['provider']);
      given([registered()])
        .when(configure({ credentials: null }))
        .thenFieldErrors(['credentials']);
      given([registered()])
        .when(configure({ fallback: { provider: 'dojah', credentials: 'x' } }))
        .thenFieldErrors(['fallback.provider']);
      given([registered()])
        .when(configure({ fallback: { provider: 'sandbox', credentials: null } }))
        .thenFieldErrors(['fallback.provider']);
      given([registered()])
        .when(configure({ environment: 'test' }))
        .thenFieldErrors(['provider']);
    });

    it('accepts the sandbox without credentials, for either environment', () => {
      expect(
        given([registered()])
          .when(configure({ environment: 'test', provider: 'sandbox', credentials: null }))
          .events(),
      ).toHaveLength(1);
    });

    it('refuses to activate a scope the configured provider cannot serve, and still activates the others', () => {
      given([registered(['nin']), configured()])
        .when({ type: 'SetActiveScopes', scopes: ['nin', 'passport'] })
        .thenFieldErrors(['scopes']);
      given([registered(['nin']), configured()])
        .when({ type: 'SetActiveScopes', scopes: ['nin', 'bvn'] })
        .then([{ type: 'ScopeActivated', data: { schemaVersion: v, organizationId, scope: 'bvn' } }]);
    });
  });
});
