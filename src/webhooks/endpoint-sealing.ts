import { randomBytes } from 'node:crypto';
import type { DataKeys } from '../data-protection/data-keys.js';
import type { KeyManagement } from '../data-protection/key-management.port.js';

/** An endpoint's free text: where it sends, and what the integrator calls it. */
export interface EndpointTarget {
  readonly url: string;
  readonly description: string | null;
}

/** A signing secret as its events and the endpoints table hold it. */
export interface SealedSecret {
  readonly secretId: string;
  readonly secret: string;
}

const targetContext = (endpointId: string) => `webhook-endpoint-target/${endpointId}`;
const secretContext = (endpointId: string, secretId: string) => `webhook-endpoint-secret/${endpointId}/${secretId}`;

/**
 * Marks a value sealed under the organization's key-encryption key (base64 never holds a colon),
 * and is what the events' and the table's `masterKeyId` say for such an endpoint: no master key
 * seals it directly.
 */
export const ORGANIZATION_KEY = 'organization';
const PREFIX = `${ORGANIZATION_KEY}:`;

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Seals an endpoint's URL, description and signing secrets, each bound to its organization, its
 * endpoint (and the secret's id): the events and the tables hold only the sealed forms; the plain
 * ones exist in memory, in the answer that shows a secret once and on the way to a send.
 *
 * They are sealed under the organization's key-encryption key (DataKeys), not under the master key:
 * the `webhookEndpoint-{id}` events are never rewritten, and the master key wraps only the
 * organization's key, which `keys rotate-master` re-wraps; so a rotation leaves every endpoint
 * openable under the new master key alone, and an offboarding (the organization's keys destroyed)
 * leaves its endpoints unreadable. A value with no `organization:` prefix was sealed under the
 * master key directly: it opens only while that master key is the configured one.
 */
export class EndpointSealing {
  constructor(
    private readonly dataKeys: DataKeys,
    private readonly masterKey: KeyManagement,
  ) {}

  /** What the events record as the key of a value sealed now. */
  get masterKeyId(): string {
    return ORGANIZATION_KEY;
  }

  async sealTarget(organizationId: string, endpointId: string, target: EndpointTarget): Promise<string> {
    return this.seal(organizationId, JSON.stringify({ url: target.url, description: target.description }), targetContext(endpointId));
  }

  async sealSecret(organizationId: string, endpointId: string, secretId: string, secret: string): Promise<string> {
    return this.seal(organizationId, secret, secretContext(endpointId, secretId));
  }

  async openTarget(organizationId: string, endpointId: string, sealed: string): Promise<EndpointTarget> {
    const [plain] = await this.open(organizationId, [{ sealed, context: targetContext(endpointId) }]);
    const opened = JSON.parse(plain) as EndpointTarget;
    return { url: opened.url, description: opened.description ?? null };
  }

  /** The target and the given secrets of one endpoint, with one read of the organization's keys. */
  async openEndpoint(organizationId: string, endpointId: string, sealedTarget: string, secrets: readonly SealedSecret[]): Promise<{ target: EndpointTarget; secrets: string[] }> {
    const [target, ...plain] = await this.open(organizationId, [
      { sealed: sealedTarget, context: targetContext(endpointId) },
      ...secrets.map((secret) => ({ sealed: secret.secret, context: secretContext(endpointId, secret.secretId) })),
    ]);
    const opened = JSON.parse(target) as EndpointTarget;
    return { target: { url: opened.url, description: opened.description ?? null }, secrets: plain };
  }

  private async seal(organizationId: string, plain: string, context: string): Promise<string> {
    const [sealed] = await this.dataKeys.sealForOrganization(organizationId, [{ plain: Buffer.from(plain, 'utf8'), context }]);
    return `${PREFIX}${sealed}`;
  }

  private async open(organizationId: string, values: readonly { sealed: string; context: string }[]): Promise<string[]> {
    const underOrganization = values.filter((value) => value.sealed.startsWith(PREFIX));
    const opened =
      underOrganization.length === 0
        ? []
        : await this.dataKeys.openForOrganization(
            organizationId,
            underOrganization.map((value) => ({ sealed: value.sealed.slice(PREFIX.length), context: value.context })),
          );
    let next = 0;
    return Promise.all(values.map(async (value) => (value.sealed.startsWith(PREFIX) ? opened[next++] : await this.masterKey.unwrap(value.sealed, value.context)).toString('utf8')));
  }
}
