import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { PublicOrigin } from '../common/public-origin.js';
import { CONFIG } from '../config/runtime.js';
import type { AppConfig } from '../config/config.js';
import { DataKeys } from '../data-protection/data-keys.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import { signPortraitLink } from './portrait-links.js';
import { PortraitStore, type PortraitContentType, type StoredPortrait } from './portrait.store.js';

/** The result field that holds a stored portrait's id in events and read models. */
export const PORTRAIT_ID_FIELD = 'portraitId';
/** The result fields integrators see instead: a signed link, and when it stops working. */
export const PORTRAIT_URL_FIELD = 'portraitUrl';
export const PORTRAIT_URL_EXPIRES_FIELD = 'portraitUrlExpiresAt';

export function sniffImage(bytes: Buffer): PortraitContentType | null {
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length > 8 && bytes[0] === 0x89 && bytes.subarray(1, 4).toString('ascii') === 'PNG') return 'image/png';
  return null;
}

/**
 * Stores portraits and turns the stored id of a result into a freshly signed link each time a
 * verification is shown, so a verification read days later still carries a working link.
 */
@Injectable()
export class Portraits {
  constructor(
    @Inject(PortraitStore) private readonly files: PortraitStore,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(PublicOrigin) private readonly publicOrigin: PublicOrigin,
  ) {}

  /**
   * Stores the portrait of verification `reference`, sealed under its data key. Returns the
   * portrait id, or null when the bytes are not a PNG or JPEG (then nothing is stored).
   */
  async store(organizationId: string, reference: string, bytes: Buffer): Promise<string | null> {
    const contentType = sniffImage(bytes);
    if (contentType === null) return null;
    const key = await this.keys.sealingKey(reference);
    if (key.status !== 'open') throw new Error(`invariant: no usable data key for the portrait of ${reference}`);
    return this.files.put(organizationId, contentType, bytes, { reference, key: key.key });
  }

  /** The portrait's bytes; null when unknown or erased (its verification's data key destroyed). */
  async get(portraitId: string): Promise<StoredPortrait | null> {
    return this.files.get(portraitId, async (reference) => {
      const key = await this.keys.get(reference);
      return key.status === 'open' ? key.key : null;
    });
  }

  /** Deletes the portrait a result names, if any (erasure). */
  async delete(result: JsonObject): Promise<void> {
    const portraitId = result[PORTRAIT_ID_FIELD];
    if (typeof portraitId === 'string') await this.files.delete(portraitId);
  }

  /** The result as integrators see it: the stored portrait id replaced by a freshly signed link. */
  present(result: JsonObject): JsonObject {
    const portraitId = result[PORTRAIT_ID_FIELD];
    if (typeof portraitId !== 'string') return result;
    const { [PORTRAIT_ID_FIELD]: _stored, ...rest } = result;
    const link = signPortraitLink(this.files.linkSecret, portraitId, this.clock.now(), this.config.portraits.urlTtlSeconds);
    return { ...rest, [PORTRAIT_URL_FIELD]: `${this.publicOrigin.origin()}${link.path}`, [PORTRAIT_URL_EXPIRES_FIELD]: link.expiresAt.toISOString().replace(/Z$/, '+00:00') };
  }
}
