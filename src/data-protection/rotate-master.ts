import type pg from 'pg';
import { indexContext, kekContext } from './data-keys.js';
import type { KeyManagement } from './key-management.port.js';
import { totpContext } from './master-key-uses.js';
import { inTransaction } from '../database/transaction.js';

export interface RotationReport {
  /** Organizations' keys re-wrapped under the new master key. */
  readonly rewrapped: number;
  /** Rows already under the new master key (a run that was repeated or resumed). */
  readonly alreadyRotated: number;
  /** Destroyed organization keys: nothing to re-wrap, only the master key id moves. */
  readonly destroyed: number;
  /** Operators' TOTP secrets re-wrapped, and those already under the new key. */
  readonly totpSecrets: { readonly rewrapped: number; readonly alreadyRotated: number };
  /** Older versions of organizations' key-encryption keys (organization_kek_versions) re-wrapped, and those already under the new key. */
  readonly retiredOrganizationKeys: { readonly rewrapped: number; readonly alreadyRotated: number };
  /** Wallet-history checkpoints dropped (their MACs are under the old key; the next reads rebuild them). */
  readonly historyCheckpointsDropped: number;
}

/** A row is wrapped under neither the current nor the new master key: rotating would lose it. */
export class UnknownMasterKey extends Error {
  /** `owner`: whose secret (an organization's id, or `console user <id>`). */
  constructor(
    readonly owner: string,
    readonly masterKeyId: string,
  ) {
    super(`the secrets of ${owner} are wrapped under ${masterKeyId}, neither the current nor the new master key`);
    this.name = 'UnknownMasterKey';
  }
}

/**
 * Moves everything the master key protects (master-key-uses.ts) from `from` to `to`, in one
 * transaction (all or none: a kill part-way leaves every secret under the old key), idempotent
 * (what is already under `to` is left): the organizations' keys and the operators' TOTP secrets
 * re-wrapped, the wallet-history checkpoints dropped. No event and no data key changes: data keys
 * and webhook endpoints' sealed values are under the organization keys, not the master.
 */
export async function rotateMaster(pool: pg.Pool, from: KeyManagement, to: KeyManagement): Promise<RotationReport> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{
      organization_id: string;
      master_key_id: string;
      wrapped_kek: string | null;
      wrapped_index_key: string | null;
      kek_version: number;
      index_version: number;
      retiring_index_key: string | null;
      retiring_index_version: number | null;
    }>(
      'select organization_id, master_key_id, wrapped_kek, wrapped_index_key, kek_version, index_version, retiring_index_key, retiring_index_version from organization_keys order by organization_id for update',
    );
    let rewrapped = 0;
    let alreadyRotated = 0;
    let destroyed = 0;
    for (const row of rows) {
      if (row.master_key_id === to.masterKeyId) {
        alreadyRotated++;
        continue;
      }
      if (!from.canUnwrap(row.master_key_id)) throw new UnknownMasterKey(row.organization_id, row.master_key_id);
      if (row.wrapped_kek === null || row.wrapped_index_key === null) {
        await client.query('update organization_keys set master_key_id = $2, rewrapped_at = now() where organization_id = $1', [row.organization_id, to.masterKeyId]);
        destroyed++;
        continue;
      }
      const kek = await from.unwrap(row.wrapped_kek, kekContext(row.organization_id, row.kek_version));
      const index = await from.unwrap(row.wrapped_index_key, indexContext(row.organization_id, row.index_version));
      // The index key a rotation is retiring (index-key-rotation.ts), while its pass runs.
      const retiringVersion = row.retiring_index_version ?? 1;
      const retiring = row.retiring_index_key === null ? null : await from.unwrap(row.retiring_index_key, indexContext(row.organization_id, retiringVersion));
      try {
        await client.query(
          'update organization_keys set master_key_id = $2, wrapped_kek = $3, wrapped_index_key = $4, retiring_index_key = $5, rewrapped_at = now() where organization_id = $1',
          [
            row.organization_id,
            to.masterKeyId,
            await to.wrap(kek, kekContext(row.organization_id, row.kek_version)),
            await to.wrap(index, indexContext(row.organization_id, row.index_version)),
            retiring === null ? null : await to.wrap(retiring, indexContext(row.organization_id, retiringVersion)),
          ],
        );
      } finally {
        kek.fill(0);
        index.fill(0);
        retiring?.fill(0);
      }
      rewrapped++;
    }
    const retiredOrganizationKeys = await rotateRetiredKeks(client, from, to);
    const totpSecrets = await rotateTotpSecrets(client, from, to);
    // A cache keyed by the master key: emptied, not re-keyed (the replay it saves is rebuilt on the next reads).
    const dropped = await client.query('delete from wallet_history_checkpoints');
    return { rewrapped, alreadyRotated, destroyed, retiredOrganizationKeys, totpSecrets, historyCheckpointsDropped: dropped.rowCount ?? 0 };
  });
}

/** Older versions of organizations' KEKs, kept to unwrap what they wrapped: re-wrapped from `from` to `to`. */
async function rotateRetiredKeks(client: pg.PoolClient, from: KeyManagement, to: KeyManagement): Promise<RotationReport['retiredOrganizationKeys']> {
  const { rows } = await client.query<{ organization_id: string; version: number; master_key_id: string; wrapped_kek: string }>(
    'select organization_id, version, master_key_id, wrapped_kek from organization_kek_versions order by organization_id, version for update',
  );
  let rewrapped = 0;
  let alreadyRotated = 0;
  for (const row of rows) {
    if (row.master_key_id === to.masterKeyId) {
      alreadyRotated++;
      continue;
    }
    if (!from.canUnwrap(row.master_key_id)) throw new UnknownMasterKey(`${row.organization_id} (key version ${row.version})`, row.master_key_id);
    const kek = await from.unwrap(row.wrapped_kek, kekContext(row.organization_id, row.version));
    try {
      await client.query('update organization_kek_versions set master_key_id = $3, wrapped_kek = $4 where organization_id = $1 and version = $2', [
        row.organization_id,
        row.version,
        to.masterKeyId,
        await to.wrap(kek, kekContext(row.organization_id, row.version)),
      ]);
    } finally {
      kek.fill(0);
    }
    rewrapped++;
  }
  return { rewrapped, alreadyRotated };
}

/** Operators' TOTP secrets, re-wrapped from `from` to `to` (a secret with no master key id is under the key in force: `from`). */
async function rotateTotpSecrets(client: pg.PoolClient, from: KeyManagement, to: KeyManagement): Promise<RotationReport['totpSecrets']> {
  const { rows } = await client.query<{ id: string; totp_secret: string; totp_master_key_id: string | null }>(
    'select id, totp_secret, totp_master_key_id from console_users where totp_secret is not null order by id for update',
  );
  let rewrapped = 0;
  let alreadyRotated = 0;
  for (const row of rows) {
    if (row.totp_master_key_id === to.masterKeyId) {
      alreadyRotated++;
      continue;
    }
    if (row.totp_master_key_id !== null && !from.canUnwrap(row.totp_master_key_id)) throw new UnknownMasterKey(`console user ${row.id}`, row.totp_master_key_id);
    const secret = await from.unwrap(row.totp_secret, totpContext(row.id));
    try {
      await client.query('update console_users set totp_secret = $2, totp_master_key_id = $3 where id = $1', [row.id, await to.wrap(secret, totpContext(row.id)), to.masterKeyId]);
    } finally {
      secret.fill(0);
    }
    rewrapped++;
  }
  return { rewrapped, alreadyRotated };
}
