import { describe } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Pkcs11Config } from '../../src/config/config.js';

type TokenConfig = Omit<Pkcs11Config, 'keyLabel' | 'refreshMs'>;

/**
 * Where the PKCS#11 tests get a token: the SoftHSM2 token the jest global setup made for this run
 * (test/support/global-setup.mjs; softhsm2 installed: `apt-get install softhsm2`, as .ci/run does),
 * else the token KMS_PKCS11_MODULE, KMS_PKCS11_TOKEN_LABEL and KMS_PKCS11_PIN name, else none.
 * Each test uses a key label of its own, so tests never see each other's keys.
 */
export const PKCS11_SOURCE:
  { readonly kind: 'softhsm' | 'configured'; readonly token: TokenConfig; readonly softHsmConf?: string } | { readonly kind: 'none'; readonly reason: string } = (() => {
  const { TEST_SOFTHSM_MODULE, TEST_SOFTHSM_TOKEN_LABEL, TEST_SOFTHSM_PIN, SOFTHSM2_CONF } = process.env;
  if (TEST_SOFTHSM_MODULE && TEST_SOFTHSM_TOKEN_LABEL && TEST_SOFTHSM_PIN && SOFTHSM2_CONF) {
    return { kind: 'softhsm', token: { module: TEST_SOFTHSM_MODULE, tokenLabel: TEST_SOFTHSM_TOKEN_LABEL, pin: TEST_SOFTHSM_PIN }, softHsmConf: SOFTHSM2_CONF };
  }
  const { KMS_PKCS11_MODULE, KMS_PKCS11_TOKEN_LABEL, KMS_PKCS11_PIN } = process.env;
  if (KMS_PKCS11_MODULE && KMS_PKCS11_TOKEN_LABEL && KMS_PKCS11_PIN)
    return { kind: 'configured', token: { module: KMS_PKCS11_MODULE, tokenLabel: KMS_PKCS11_TOKEN_LABEL, pin: KMS_PKCS11_PIN } };
  return { kind: 'none', reason: 'no PKCS#11 token: neither softhsm2 (apt-get install softhsm2) nor KMS_PKCS11_MODULE, KMS_PKCS11_TOKEN_LABEL and KMS_PKCS11_PIN' };
})();

/** `describe`, or a skip whose title and a warning say why (no token to test against). */
export function describeWithPkcs11(title: string, suite: () => void): void {
  if (PKCS11_SOURCE.kind === 'none') {
    console.warn(`SKIPPED: "${title}": ${PKCS11_SOURCE.reason}`);
    describe.skip(`${title} [SKIPPED: ${PKCS11_SOURCE.reason}]`, suite);
    return;
  }
  describe(title, suite);
}

export interface TestToken {
  /** The adapter's configuration, with a key label of this test's own. */
  readonly config: Pkcs11Config;
  /** The variables a process needs to use it (KEY_MANAGEMENT, KMS_PKCS11_*, SOFTHSM2_CONF). */
  readonly env: Record<string, string>;
}

export function testToken(refreshMs = 30_000): TestToken {
  if (PKCS11_SOURCE.kind === 'none') throw new Error(PKCS11_SOURCE.reason);
  const config: Pkcs11Config = { ...PKCS11_SOURCE.token, keyLabel: `test-${randomBytes(4).toString('hex')}`, refreshMs };
  return {
    config,
    env: {
      KEY_MANAGEMENT: 'pkcs11',
      KMS_PKCS11_MODULE: config.module,
      KMS_PKCS11_TOKEN_LABEL: config.tokenLabel,
      KMS_PKCS11_PIN: config.pin,
      KMS_PKCS11_KEY_LABEL: config.keyLabel,
      KMS_PKCS11_REFRESH_MS: String(config.refreshMs),
      ...(PKCS11_SOURCE.softHsmConf === undefined ? {} : { SOFTHSM2_CONF: PKCS11_SOURCE.softHsmConf }),
    },
  };
}
