import type { Schema } from '../common/openapi.js';

/** The OpenAPI schemas of the deployment's Paystack key: what operators send, and the little they see back. */
export function paystackKeySchemas(): Record<string, Schema> {
  return {
    PaystackKey: {
      type: 'object',
      description: 'The Paystack secret key in force: never the key itself',
      required: ['configured', 'source', 'mode', 'last4', 'setAt'],
      properties: {
        configured: { type: 'boolean', description: 'false: live top-ups are off (outside the embedded default)' },
        source: {
          type: ['string', 'null'],
          enum: ['sealed', 'environment', null],
          description: 'sealed: set through this API; environment: PAYSTACK_SECRET_KEY, in force until a key is set here',
        },
        mode: { type: ['string', 'null'], enum: ['live', 'test', null], description: 'from the key: sk_live_ or sk_test_' },
        last4: { type: ['string', 'null'], description: 'the last four characters, to recognise the key' },
        setAt: { type: ['string', 'null'], format: 'date-time', description: 'when an operator set it (null for the environment key)' },
      },
    },
    SetPaystackKey: {
      type: 'object',
      required: ['secretKey'],
      additionalProperties: false,
      properties: {
        secretKey: {
          type: 'string',
          pattern: '^sk_(live|test)_[A-Za-z0-9]{16,200}$',
          description: "the secret key from Paystack's dashboard (Settings, API keys)",
          writeOnly: true,
        },
      },
    },
  };
}
