/**
 * What the hosted page posts to the page that frames it, and the DOM events `<verification-flow>`
 * fires from them. Only the session id and how the flow ended: never a result, never personal data.
 */
export type VerificationErrorCode =
  /** The session's time ran out. */
  | 'session_expired'
  /** Cancelled, or already submitted or decided. */
  | 'session_closed'
  /** The client secret is not this session's. */
  | 'invalid_secret'
  /** The element was given no session id and secret, or a hosted URL of another service. */
  | 'invalid_embedding';

/** How the flow ended, as the page tells it. */
export type FlowOutcome = { readonly type: 'complete' } | { readonly type: 'error'; readonly code: VerificationErrorCode };

export type FlowMessage = FlowOutcome & { readonly source: 'verification-flow'; readonly sessionId: string };

export interface VerificationCompleteDetail {
  readonly sessionId: string;
}

export interface VerificationErrorDetail {
  readonly sessionId: string;
  readonly code: VerificationErrorCode;
}

// For integrators' TypeScript: `addEventListener('verification-complete', (event) => event.detail.sessionId)`.
declare global {
  interface HTMLElementEventMap {
    'verification-complete': CustomEvent<VerificationCompleteDetail>;
    'verification-error': CustomEvent<VerificationErrorDetail>;
  }
}
