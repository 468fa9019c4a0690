import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from '../../clients/typescript/src/index.js';

/**
 * verifyWebhook: a delivery signed as the service signs it (standardwebhooks' Webhook.sign, the
 * Standard Webhooks headers) verifies and comes back as a typed event; anything altered, stale or
 * signed with another secret is refused; a receiver holding two secrets during a rotation accepts
 * either.
 */

const secretOf = (seed: string) => `whsec_${Buffer.from(seed.padEnd(32, '.')).toString('base64')}`;
const oldSecret = secretOf('the secret before the rotation');
const newSecret = secretOf('the secret after the rotation');

const event: WebhookEvent = {
  type: 'verification.completed',
  timestamp: '2026-12-06T10:00:00.000Z',
  data: {
    organizationId: 'org_1',
    environment: 'test',
    reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
    scope: 'nin',
    status: 'found',
    charged: true,
    completedAt: '2026-12-06T10:00:00.000Z',
  },
};

/** The headers the service sends for `body`, signed at `at` with each secret (both during an overlap). */
function signed(body: string, secrets: string[], at = new Date()): Record<string, string> {
  const id = 'msg_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}

describe('verifyWebhook', () => {
  const body = JSON.stringify(event);

  it('verifies a signed delivery and answers its typed event', () => {
    const verified = verifyWebhook(body, signed(body, [newSecret]), newSecret);
    expect(verified).toEqual(event);
    if (verified.type === 'verification.completed') expect(verified.data.status).toBe('found');
  });

  it('takes the body as bytes and the headers as Fetch Headers or with arrays, any case', () => {
    const headers = signed(body, [newSecret]);
    expect(verifyWebhook(Buffer.from(body), new Headers(headers), newSecret)).toEqual(event);
    const nodeStyle = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), [value]]));
    expect(verifyWebhook(new TextEncoder().encode(body), nodeStyle, newSecret)).toEqual(event);
  });

  it('refuses an altered body', () => {
    const headers = signed(body, [newSecret]);
    const altered = body.replace('"found"', '"not_found"');
    expect(() => verifyWebhook(altered, headers, newSecret)).toThrow(WebhookVerificationError);
  });

  it('refuses a delivery signed more than five minutes ago', () => {
    const stale = signed(body, [newSecret], new Date(Date.now() - 6 * 60_000));
    const refused = (() => {
      try {
        return verifyWebhook(body, stale, newSecret);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(WebhookVerificationError);
    expect((refused as WebhookVerificationError).code).toBe('webhook_signature_invalid');
  });

  it('refuses a delivery signed with another secret, and one without its headers', () => {
    expect(() => verifyWebhook(body, signed(body, [oldSecret]), newSecret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, {}, newSecret)).toThrow(WebhookVerificationError);
  });

  describe('During a rotation overlap', () => {
    it('accepts a delivery signed with either of the two secrets it holds', () => {
      expect(verifyWebhook(body, signed(body, [oldSecret]), [oldSecret, newSecret])).toEqual(event);
      expect(verifyWebhook(body, signed(body, [newSecret]), [oldSecret, newSecret])).toEqual(event);
    });

    it('accepts a delivery the service signed with both, holding only the new one', () => {
      expect(verifyWebhook(body, signed(body, [oldSecret, newSecret]), newSecret)).toEqual(event);
    });

    it('still refuses a secret it does not hold', () => {
      expect(() => verifyWebhook(body, signed(body, [secretOf('a third secret')]), [oldSecret, newSecret])).toThrow(WebhookVerificationError);
    });
  });

  it('refuses to verify with no secret at all', () => {
    expect(() => verifyWebhook(body, signed(body, [newSecret]), [])).toThrow(WebhookVerificationError);
  });
});
