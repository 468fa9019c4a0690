import { describe, expect, it } from '@jest/globals';
import { Conflict, NotFound } from '../common/errors.js';
import { givenFor } from '../event-sourcing/decider.testing.js';
import { webhookEndpointDecider, type WebhookEndpointCommand } from './webhook-endpoint.decider.js';
import type { WebhookEndpointEvent } from './webhook-endpoint.events.js';

const endpointId = 'ep_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const organizationId = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const owner = { organizationId, environment: 'test' };
const stranger = { organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TS', environment: 'test' };
const at = new Date('2026-11-01T10:00:00Z');
const given = givenFor(webhookEndpointDecider, { occurredAt: at });

const create: WebhookEndpointCommand = {
  type: 'CreateWebhookEndpoint',
  endpointId,
  organizationId,
  environment: 'test',
  target: 'sealed-target',
  masterKeyId: 'local:1',
  eventTypes: ['wallet.funded', 'verification.completed'],
  enabled: true,
  secret: { secretId: 's1', secret: 'sealed-s1', masterKeyId: 'local:1' },
};
const created: WebhookEndpointEvent = {
  type: 'WebhookEndpointCreated',
  data: {
    schemaVersion: 1,
    endpointId,
    organizationId,
    environment: 'test',
    target: 'sealed-target',
    eventTypes: ['verification.completed', 'wallet.funded'],
    enabled: true,
    secretId: 's1',
    secret: 'sealed-s1',
    masterKeyId: 'local:1',
  },
};
const deleted: WebhookEndpointEvent = { type: 'WebhookEndpointDeleted', data: { schemaVersion: 1, endpointId } };
const disabled: WebhookEndpointEvent = { type: 'WebhookEndpointDisabled', data: { schemaVersion: 1, endpointId, reason: 'failing' } };

describe('webhook endpoint decider', () => {
  describe('creating', () => {
    it('records the endpoint with its sealed target and secret and its types in canonical order', () => given([]).when(create).then([created]));
    it('refuses unknown event types, naming each', () =>
      given([])
        .when({ ...create, eventTypes: ['wallet.funded', 'wallet.emptied'] })
        .thenFieldErrors(['eventTypes[1]']));
    it('refuses an id that exists', () => given([created]).when(create).thenThrows(Conflict));
  });

  describe('updating', () => {
    it('records only what changed', () =>
      given([created])
        .when({ type: 'UpdateWebhookEndpoint', owner, eventTypes: ['verification.completed', 'wallet.funded'], enabled: false })
        .then([{ type: 'WebhookEndpointUpdated', data: { schemaVersion: 1, endpointId, enabled: false } }]));
    it('writes nothing when nothing changed', () =>
      given([created])
        .when({ type: 'UpdateWebhookEndpoint', owner, enabled: true, eventTypes: ['wallet.funded', 'verification.completed'] })
        .thenNothing());
    it('re-enables an endpoint the service disabled', () => {
      given([created, disabled])
        .when({ type: 'UpdateWebhookEndpoint', owner, enabled: true })
        .then([{ type: 'WebhookEndpointUpdated', data: { schemaVersion: 1, endpointId, enabled: true } }]);
    });
    it("is not found for another organization's or environment's key, or once deleted", () => {
      given([created]).when({ type: 'UpdateWebhookEndpoint', owner: stranger, enabled: false }).thenThrows(NotFound);
      given([created])
        .when({ type: 'UpdateWebhookEndpoint', owner: { organizationId, environment: 'live' }, enabled: false })
        .thenThrows(NotFound);
      given([created, deleted]).when({ type: 'UpdateWebhookEndpoint', owner, enabled: false }).thenThrows(NotFound);
      given([]).when({ type: 'UpdateWebhookEndpoint', owner: null, enabled: false }).thenThrows(NotFound);
    });
  });

  describe('rotating the secret', () => {
    const rotate = (overlapSeconds: number): WebhookEndpointCommand => ({
      type: 'RotateWebhookSecret',
      owner,
      secret: { secretId: 's2', secret: 'sealed-s2', masterKeyId: 'local:1' },
      overlapSeconds,
      at,
    });
    it('makes the new secret current and keeps the previous one signing until the end of the overlap', () => {
      given([created])
        .when(rotate(3_600))
        .then([
          {
            type: 'WebhookEndpointSecretRotated',
            data: {
              schemaVersion: 1,
              endpointId,
              secretId: 's2',
              secret: 'sealed-s2',
              masterKeyId: 'local:1',
              previousSecretId: 's1',
              previousValidUntil: '2026-11-01T11:00:00.000Z',
            },
          },
        ]);
      expect(given([created]).when(rotate(60)).thenState().currentSecretId).toBe('s2');
    });
    it('refuses an overlap below 0 or past a week', () => {
      given([created]).when(rotate(-1)).thenFieldErrors(['overlapSeconds']);
      given([created])
        .when(rotate(7 * 86_400 + 1))
        .thenFieldErrors(['overlapSeconds']);
    });
  });

  describe('disabling a failing endpoint', () => {
    it('disables an enabled endpoint once', () => {
      given([created]).when({ type: 'DisableFailingWebhookEndpoint' }).then([disabled]);
      given([created, disabled]).when({ type: 'DisableFailingWebhookEndpoint' }).thenNothing();
    });
  });

  describe('deleting', () => {
    it('deletes it, and a second delete is not found', () => {
      given([created]).when({ type: 'DeleteWebhookEndpoint', owner }).then([deleted]);
      given([created, deleted]).when({ type: 'DeleteWebhookEndpoint', owner }).thenThrows(NotFound);
    });
  });
});
