/**
 * `<verification-flow>`: the hosted page in an iframe, for an integrator's own page. Served by the
 * service at /verify/element.js as a module of its own (no framework, nothing shared with the page).
 *
 *   <script type="module" src="https://{service}/verify/element.js"></script>
 *   <verification-flow session-id="vss_…" client-secret="vcs_…"></verification-flow>
 *
 * The flow's allowed origins (frame-ancestors) still decide where the page may be framed. The page
 * tells its parent how it ended with postMessage; the element believes a message only from the
 * service's origin (the script's own) and from its own iframe, and fires `verification-complete`
 * (the session id only: the integrator reads the decision with its key) or `verification-error`.
 */
import type { FlowMessage, VerificationCompleteDetail, VerificationErrorCode, VerificationErrorDetail } from './messages.js';

const SERVICE_ORIGIN = new URL(import.meta.url).origin;
const SESSION_ID = /^vss_[0-9A-Z]{26}$/;
const ERROR_CODES: readonly VerificationErrorCode[] = ['session_expired', 'session_closed', 'invalid_secret', 'invalid_embedding'];

// A constructed style sheet is not an inline style: an integrator's CSP needs no 'unsafe-inline' for it.
const SHEET = new CSSStyleSheet();
SHEET.replaceSync(`
  :host { display: block; width: 100%; max-width: 36rem; }
  :host([hidden]) { display: none; }
  iframe { display: block; width: 100%; height: min(52rem, 100dvh); border: 0; border-radius: 12px; background: #f8f9fa; }
  iframe:not([src]) { display: none; }
  @media (max-width: 40rem) { :host { max-width: none; } iframe { height: 100dvh; border-radius: 0; } }
`);

function isFlowMessage(data: unknown): data is FlowMessage {
  if (typeof data !== 'object' || data === null) return false;
  const message = data as Record<string, unknown>;
  if (message.source !== 'verification-flow' || typeof message.sessionId !== 'string' || !SESSION_ID.test(message.sessionId)) return false;
  return message.type === 'complete' || (message.type === 'error' && ERROR_CODES.includes(message.code as VerificationErrorCode));
}

export class VerificationFlowElement extends HTMLElement {
  static readonly observedAttributes = ['session-id', 'client-secret', 'hosted-url'];
  private readonly frame = document.createElement('iframe');
  private sessionId = '';
  private loadQueued = false;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [SHEET];
    this.frame.allow = 'camera';
    // The page learns its parent's origin from this where the browser has no location.ancestorOrigins.
    this.frame.referrerPolicy = 'strict-origin';
    this.frame.title = 'Identity verification';
    root.append(this.frame);
  }

  connectedCallback(): void {
    window.addEventListener('message', this.onMessage);
    this.queueLoad();
  }

  disconnectedCallback(): void {
    window.removeEventListener('message', this.onMessage);
  }

  attributeChangedCallback(): void {
    if (this.isConnected) this.queueLoad();
  }

  /** Once the attributes set together (the session id, then its secret) are all there. */
  private queueLoad(): void {
    if (this.loadQueued) return;
    this.loadQueued = true;
    queueMicrotask(() => {
      this.loadQueued = false;
      this.load();
    });
  }

  /** The page's address: the hosted URL given, on the service's own origin, or the session id and secret. */
  private load(): void {
    const hostedUrl = this.getAttribute('hosted-url');
    let url: URL | undefined;
    if (hostedUrl !== null) {
      url = URL.canParse(hostedUrl) ? new URL(hostedUrl) : undefined;
      if (url !== undefined && url.origin !== SERVICE_ORIGIN) url = undefined;
    } else {
      const id = this.getAttribute('session-id') ?? '';
      const secret = this.getAttribute('client-secret') ?? '';
      if (id !== '' && secret !== '') url = new URL(`/verify/${encodeURIComponent(id)}#${encodeURIComponent(secret)}`, SERVICE_ORIGIN);
    }
    const id = url === undefined ? '' : decodeURIComponent(url.pathname.replace(/^\/verify\//, ''));
    if (url === undefined || !SESSION_ID.test(id)) {
      // The session the integrator meant, for the event: its id as given, or from the hosted URL's path.
      const claimed = this.getAttribute('session-id') ?? /\/verify\/([^/?#]+)/.exec(hostedUrl ?? '')?.[1] ?? '';
      if (this.getAttribute('session-id') !== null || hostedUrl !== null) this.fail(SESSION_ID.test(claimed) ? claimed : '', 'invalid_embedding');
      return;
    }
    if (this.frame.src === url.href) return;
    this.sessionId = id;
    this.frame.src = url.href;
  }

  private readonly onMessage = (event: MessageEvent): void => {
    if (event.origin !== SERVICE_ORIGIN || event.source !== this.frame.contentWindow || !isFlowMessage(event.data)) return;
    const message = event.data;
    if (message.sessionId !== this.sessionId) return;
    if (message.type === 'complete')
      this.dispatchEvent(new CustomEvent<VerificationCompleteDetail>('verification-complete', { detail: { sessionId: message.sessionId }, bubbles: true, composed: true }));
    else this.fail(message.sessionId, message.code);
  };

  private fail(sessionId: string, code: VerificationErrorCode): void {
    this.dispatchEvent(new CustomEvent<VerificationErrorDetail>('verification-error', { detail: { sessionId, code }, bubbles: true, composed: true }));
  }
}

if (customElements.get('verification-flow') === undefined) customElements.define('verification-flow', VerificationFlowElement);
