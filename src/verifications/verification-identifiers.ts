import type { IdentifierSource } from '../data-protection/index-key-rotation.js';
import type { VerificationStreams } from './verification.stream.js';

/** A check's identifiers for a re-tokenising pass: its request and result, opened from its stream now; null once erased. */
export function verificationIdentifiers(streams: VerificationStreams): IdentifierSource {
  return async (reference) => {
    const state = await streams.load(reference);
    if (state.status === 'none' || state.personalDataErasedAt !== null) return null;
    return [state.requested.request, state.result];
  };
}
