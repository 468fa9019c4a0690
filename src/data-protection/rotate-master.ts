import type pg from 'pg';
import { indexContext, kekContext } from './data-keys.js';
import type { KeyManagement } from './key-management.port.js';
import { inTransaction } from '../database/transaction.js';

export interface RotationReport {
  readonly rewrapped: number;
  /** Rows already under the new master key (a run that was repeated or resumed). */
  readonly alreadyRotated: number;
  /** Destroyed organization keys: nothing to re-wrap, only the master key id moves. */
  readonly destroyed: number;
}

/** A row is wrapped under neither the current nor the new master key: rotating would lose it. */
export class UnknownMasterKey extends Error {
  constructor(readonly organizationId: string, readonly masterKeyId: string) {
    super(`the keys of organization ${organizationId} are wrapped under ${masterKeyId}, neither the current nor the new master key`);
    this.name = 'UnknownMasterKey';
  }
}

/**
 * Re-wraps every organization's keys from `from` to `to`, in one transaction (all or none: a kill
 * part-way leaves every row under the old key), idempotent (rows already under `to` are left). No
 * event and no data key changes: data keys are wrapped by the organization keys, not the master.
 */
export async function rotateMaster(pool: pg.Pool, from: KeyManagement, to: KeyManagement): Promise<RotationReport> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ organization_id: string; master_key_id: string; wrapped_kek: string | null; wrapped_index_key: string | null }>(
      'select organization_id, master_key_id, wrapped_kek, wrapped_index_key from organization_keys order by organization_id for update',
    );
    let rewrapped = 0;
    let alreadyRotated = 0;
    let destroyed = 0;
    for (const row of rows) {
      if (row.master_key_id === to.masterKeyId) {
        alreadyRotated++;
        continue;
      }
      if (row.master_key_id !== from.masterKeyId) throw new UnknownMasterKey(row.organization_id, row.master_key_id);
      if (row.wrapped_kek === null || row.wrapped_index_key === null) {
        await client.query('update organization_keys set master_key_id = $2, rewrapped_at = now() where organization_id = $1', [row.organization_id, to.masterKeyId]);
        destroyed++;
        continue;
      }
      const kek = await from.unwrap(row.wrapped_kek, kekContext(row.organization_id));
      const index = await from.unwrap(row.wrapped_index_key, indexContext(row.organization_id));
      try {
        await client.query('update organization_keys set master_key_id = $2, wrapped_kek = $3, wrapped_index_key = $4, rewrapped_at = now() where organization_id = $1', [
          row.organization_id,
          to.masterKeyId,
          await to.wrap(kek, kekContext(row.organization_id)),
          await to.wrap(index, indexContext(row.organization_id)),
        ]);
      } finally {
        kek.fill(0);
        index.fill(0);
      }
      rewrapped++;
    }
    return { rewrapped, alreadyRotated, destroyed };
  });
}
