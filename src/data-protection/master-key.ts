import { join } from 'node:path';
import { generatedKeyFile } from '../common/key-file.js';
import { ConfigError, type AppConfig } from '../config/config.js';

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
  return generatedKeyFile(path, (key) => key.toString('base64'), (text) => parseMasterKey(text, path));
}
