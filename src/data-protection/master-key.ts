import { join } from 'node:path';
import { generatedKeyFile } from '../common/key-file.js';
import { ConfigError, type AppConfig } from '../config/config.js';
import { LocalKeyManagement, type KeyManagement } from './key-management.port.js';
import { Pkcs11KeyManagement } from './pkcs11-key-management.js';

export const MASTER_KEY_VARIABLE = 'DATA_ENCRYPTION_KEY';
export const GENERATED_MASTER_KEY_FILE = 'data-encryption.key';

/** 32 bytes as base64 (or 64 hex characters); `variable` names the source in the error. */
export function parseMasterKey(value: string, variable = MASTER_KEY_VARIABLE): Buffer {
  const trimmed = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  const decoded = Buffer.from(trimmed, 'base64');
  if (decoded.length === 32 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return decoded;
  throw new ConfigError(variable, 'must be 32 bytes, as base64 or 64 hex characters');
}

/**
 * The master key: DATA_ENCRYPTION_KEY, or on the embedded default the one generated once under
 * DATA_DIR (config refuses an external database without the variable).
 */
export async function masterKey(config: AppConfig): Promise<Buffer> {
  if (config.dataProtection.masterKey !== undefined) return parseMasterKey(config.dataProtection.masterKey);
  const path = join(config.dataDir, GENERATED_MASTER_KEY_FILE);
  return generatedKeyFile(
    path,
    (key) => key.toString('base64'),
    (text) => parseMasterKey(text, path),
  );
}

/** The configured KeyManagement adapter: the PKCS#11 token (KEY_MANAGEMENT=pkcs11), else the local master key. */
export async function keyManagement(config: AppConfig): Promise<KeyManagement> {
  if (config.dataProtection.pkcs11 !== undefined) return Pkcs11KeyManagement.open(config.dataProtection.pkcs11);
  return new LocalKeyManagement(await masterKey(config));
}
