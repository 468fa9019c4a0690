import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as english from '@zxcvbn-ts/language-en';
import { ValidationFailed } from '../common/errors.js';

/**
 * zxcvbn's score of 3: "safely unguessable", a guess count that an offline attack on a slow hash
 * would not reach. Below it the password is refused, whatever its length.
 */
export const MIN_PASSWORD_SCORE = 3;
/**
 * The estimator's work grows faster than the length; a password this long scores on its first
 * characters only (which are then strong enough, or the whole is weak anyway).
 */
const ESTIMATED_LENGTH = 100;

let estimator: ZxcvbnFactory | undefined;

/** Built on first use: the dictionaries take a moment to rank, which a CLI that never checks a password should not pay. */
function zxcvbn(): ZxcvbnFactory {
  estimator ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...english.dictionary },
    graphs: common.adjacencyGraphs,
    translations: english.translations,
    maxLength: ESTIMATED_LENGTH,
  });
  return estimator;
}

/**
 * 422 naming `field` when the password is easy to guess: common passwords, keyboard runs, dates,
 * and words of the account itself (`related`: the email, its parts, the organization's name). The
 * message says why with the estimator's own advice, never quoting the password or the related words.
 */
export function assertStrongPassword(field: string, password: string, related: readonly (string | null | undefined)[]): void {
  const words = related.flatMap((value) => (value === null || value === undefined ? [] : [value, ...value.split(/[@.\s_+-]+/)])).filter((word) => word.length >= 3);
  const result = zxcvbn().check(password, words);
  if (result.score >= MIN_PASSWORD_SCORE) return;
  const advice = [result.feedback.warning, ...result.feedback.suggestions].filter((line): line is string => typeof line === 'string' && line !== '');
  const why = advice.length > 0 ? advice.join(' ') : 'Add another word or two that are not common together.';
  throw new ValidationFailed([{ field, message: `${field} is too easy to guess: ${why} A few unrelated words make a strong password.` }]);
}
