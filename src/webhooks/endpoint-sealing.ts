import { randomBytes } from 'node:crypto';
import { KeyManagement } from '../data-protection/key-management.port.js';

/** An endpoint's free text: where it sends, and what the integrator calls it. */
export interface EndpointTarget {
  readonly url: string;
  readonly description: string | null;
}

const targetContext = (endpointId: string) => `webhook-endpoint-target/${endpointId}`;
const secretContext = (endpointId: string, secretId: string) => `webhook-endpoint-secret/${endpointId}/${secretId}`;

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Seals an endpoint's URL, description and signing secrets under the key-management port, each
 * bound to its endpoint (and secret id): the events and the tables hold only the sealed forms; the
 * plain ones exist in memory, in the answer that shows a secret once and on the way to a send.
 */
export class EndpointSealing {
  constructor(private readonly keys: KeyManagement) {}

  get masterKeyId(): string {
    return this.keys.masterKeyId;
  }

  async sealTarget(endpointId: string, target: EndpointTarget): Promise<string> {
    return this.keys.wrap(Buffer.from(JSON.stringify({ url: target.url, description: target.description }), 'utf8'), targetContext(endpointId));
  }

  async openTarget(endpointId: string, sealed: string): Promise<EndpointTarget> {
    const opened = JSON.parse((await this.keys.unwrap(sealed, targetContext(endpointId))).toString('utf8')) as EndpointTarget;
    return { url: opened.url, description: opened.description ?? null };
  }

  async sealSecret(endpointId: string, secretId: string, secret: string): Promise<string> {
    return this.keys.wrap(Buffer.from(secret, 'utf8'), secretContext(endpointId, secretId));
  }

  async openSecret(endpointId: string, secretId: string, sealed: string): Promise<string> {
    return (await this.keys.unwrap(sealed, secretContext(endpointId, secretId))).toString('utf8');
  }
}
