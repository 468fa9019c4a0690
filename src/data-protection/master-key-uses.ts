/**
 * Everything the master key protects, and where it is recorded which master key does it. `keys
 * rotate-master` (rotate-master.ts) moves each of them to the new key; a new use of the master key
 * belongs here and in the rotation, with a test that opens it after a rotation and a restart
 * (src/admin/rotate-master-restart.e2e-spec.ts).
 *
 * - Organizations' key-encryption and blind-index keys (and the index key a rotation is retiring):
 *   wrapped (KeyManagement), in `organization_keys`, with `master_key_id`. Re-wrapped. Its `console:contacts` row holds the
 *   keys of contact data no organization owns and of the email lookup hash (contact-data.ts).
 * - Older versions of organizations' key-encryption keys (kept to unwrap): wrapped (KeyManagement), in
 *   `organization_kek_versions`, with `master_key_id`. Re-wrapped.
 * - Console users' TOTP secrets, operators' and integrators' alike: wrapped (KeyManagement), in
 *   `console_users.totp_secret`, with `totp_master_key_id` (null: wrapped before the column, under
 *   the key in force). Re-wrapped. Integrators' backup codes (SHA-256 hashes) and passkeys (public
 *   keys) hold nothing under the master key.
 * - Wallet-history checkpoints: MACs under a key derived from the master key (src/audit), in
 *   `wallet_history_checkpoints`. A cache: emptied by the rotation, rebuilt by the next reads.
 *
 * Not under the master key, so untouched by its rotation: provider credentials and the
 * deployment's Paystack key (PROVIDER_CREDENTIALS_KEY) and portraits stored before data keys (PORTRAIT_ENCRYPTION_KEY), each
 * under a key of its own; data keys, wrapped by their organization's key; webhook endpoints' URLs,
 * descriptions and signing secrets (`organization:` values in the `webhookEndpoint-{id}` events),
 * sealed under their organization's key too (src/webhooks/endpoint-sealing.ts), since the log that
 * holds them is never rewritten. Endpoint values without that prefix were sealed under the master
 * key directly: they are not rotated, and open only while that master key is configured.
 */
export const MASTER_KEY_USES = ['organization_keys', 'organization_kek_versions', 'console_users.totp_secret', 'wallet_history_checkpoints'] as const;

/** What a console user's wrapped TOTP secret is bound to: its user. */
export const totpContext = (userId: string): string => `console-totp:${userId}`;
