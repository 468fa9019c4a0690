import type { FlowMessage, FlowOutcome, VerificationErrorCode } from './messages.js';
import { documentProblems, measureDocument } from '../../src/face-checks/document-measures.js';
import { STRINGS } from './strings.js';
import './styles.css';

interface Presentation {
  sessionId: string;
  status: string;
  branding: { displayName: string; colour: string; logoUrl: string | null };
  steps: string[];
  identityKinds: string[];
  documents: { document: string; sides: string[] }[];
  consent: { textVersion: number; textHash: string; text: string };
  faceModelsPath: string;
}

/** A refusal from the service: its status, code and, for a selfie, the problems found. */
class Failure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly problems: readonly string[] = [],
    /** A closed session's status (expired, cancelled, submitted…). */
    readonly sessionStatus: string | null = null,
  ) {
    super(code);
  }
}

const app = document.getElementById('app') as HTMLElement;
const sessionId = location.pathname.split('/').filter(Boolean).pop() ?? '';
// The client secret rides in the fragment, which no request carries; it is kept for this tab only
// and taken out of the address bar at once, so it is not left in the history or a screenshot.
const storageKey = `verification-session:${sessionId}`;
const secret = location.hash.length > 1 ? location.hash.slice(1) : (sessionStorage.getItem(storageKey) ?? '');
if (location.hash.length > 1) {
  sessionStorage.setItem(storageKey, secret);
  history.replaceState(null, '', location.pathname);
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`/verify/api/sessions/${encodeURIComponent(sessionId)}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({}))) as { data?: T; error?: { code?: string; details?: { problems?: string[]; status?: string } } };
  if (!response.ok) throw new Failure(response.status, answer.error?.code ?? 'error', answer.error?.details?.problems ?? [], answer.error?.details?.status ?? null);
  return answer.data as T;
}

/**
 * The page that frames this one (the `<verification-flow>` element, or any allowed page): its origin,
 * which frame-ancestors limited to the flow's allowed origins. Messages go to it alone, and say the
 * session id and how the flow ended, nothing more. No origin known (a browser without
 * ancestorOrigins, and no referrer): nothing is posted.
 */
const framed = window.parent !== window;
const parentOrigin = framed
  ? ((location.ancestorOrigins as DOMStringList | undefined)?.[0] ?? (document.referrer === '' ? undefined : new URL(document.referrer).origin))
  : undefined;

function tellParent(outcome: FlowOutcome): void {
  if (parentOrigin === undefined || parentOrigin === 'null') return;
  const message: FlowMessage = { source: 'verification-flow', sessionId, ...outcome };
  window.parent.postMessage(message, parentOrigin);
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, properties: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), properties);
  node.append(...children);
  return node;
}

function show(...children: Node[]): void {
  app.replaceChildren(...children);
  app.querySelector<HTMLElement>('h1, h2')?.focus();
}

function errorText(failure: unknown): string {
  const { status, code, problems } = failure instanceof Failure ? failure : new Failure(0, 'error');
  if (code === 'selfie_refused' && problems.length > 0) return problems.map((problem) => STRINGS.problems[problem] ?? STRINGS.errors.generic).join(' ');
  if (code === 'document_refused' && problems.length > 0) return problems.map((problem) => STRINGS.documentProblems[problem] ?? STRINGS.errors.generic).join(' ');
  if (status === 401) return STRINGS.errors.invalidLink;
  if (code === 'session_closed') return failure instanceof Failure && failure.sessionStatus === 'expired' ? STRINGS.errors.expired : STRINGS.errors.closed;
  if (status === 429) return STRINGS.errors.tooMany;
  if (status === 422) return STRINGS.errors.invalidNumber;
  return STRINGS.errors.generic;
}

function fatal(failure: unknown): void {
  show(element('h1', { tabIndex: -1 }, errorText(failure)));
  if (!(failure instanceof Failure)) return;
  const code: VerificationErrorCode | undefined =
    failure.status === 401 ? 'invalid_secret' : failure.code === 'session_closed' ? (failure.sessionStatus === 'expired' ? 'session_expired' : 'session_closed') : undefined;
  if (code !== undefined) tellParent({ type: 'error', code });
}

/** A step's frame: the integrator's logo and name, where the person is, the step's own content. */
function frame(presentation: Presentation, index: number, heading: string, ...content: Node[]): HTMLElement {
  const { logoUrl, displayName } = presentation.branding;
  const total = presentation.steps.length;
  return element(
    'div',
    {},
    ...(logoUrl === null ? [] : [element('img', { className: 'logo', src: logoUrl, alt: displayName })]),
    element('h1', { tabIndex: -1 }, STRINGS.title(displayName)),
    element('div', { className: 'card' }, element('p', { className: 'step' }, STRINGS.stepOf(index + 1, total)), element('h2', {}, heading), ...content),
  );
}

function busy(button: HTMLButtonElement, work: () => Promise<void>, error: HTMLElement): void {
  button.addEventListener('click', () => {
    const label = button.textContent;
    button.disabled = true;
    button.textContent = STRINGS.sending;
    error.textContent = '';
    work()
      .catch((failure: unknown) => {
        const { status, code } = failure instanceof Failure ? failure : new Failure(0, 'error');
        if (status === 401 || code === 'session_closed') return fatal(failure);
        error.textContent = errorText(failure);
      })
      .finally(() => {
        button.disabled = false;
        button.textContent = label;
      });
  });
}

function consentStep(presentation: Presentation, next: () => void): void {
  const error = element('p', { className: 'error', role: 'alert' });
  const agree = element('button', { type: 'button' }, STRINGS.consentAgree);
  busy(
    agree,
    async () => {
      await call('POST', '/consent', { textVersion: presentation.consent.textVersion, textHash: presentation.consent.textHash });
      next();
    },
    error,
  );
  show(frame(presentation, presentation.steps.indexOf('consent'), STRINGS.consentHeading, element('p', { className: 'consent' }, presentation.consent.text), agree, error));
}

function identityStep(presentation: Presentation, next: () => void): void {
  const kinds = presentation.identityKinds;
  const kind = element('select', { id: 'kind' }, ...kinds.map((value) => element('option', { value }, STRINGS.kinds[value] ?? value)));
  const number = element('input', {
    id: 'number',
    inputMode: kinds.length === 1 && kinds[0] === 'passport' ? 'text' : 'numeric',
    autocomplete: 'off',
    required: true,
    maxLength: 20,
  });
  const error = element('p', { className: 'error', role: 'alert' });
  const go = element('button', { type: 'button' }, STRINGS.continue);
  busy(
    go,
    async () => {
      await call('POST', '/identity', { kind: kind.value, number: number.value });
      next();
    },
    error,
  );
  const choose = kinds.length > 1 ? [element('label', { htmlFor: 'kind' }, STRINGS.identityKind), kind] : [];
  show(
    frame(
      presentation,
      presentation.steps.indexOf('identity_number'),
      STRINGS.identityHeading,
      ...choose,
      element('label', { htmlFor: 'number' }, STRINGS.identityNumber),
      number,
      element('p', { className: 'hint' }, STRINGS.identityHint),
      go,
      error,
    ),
  );
}

const toBase64 = (blob: Blob): Promise<string> =>
  new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve((reader.result as string).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(new Error('unreadable'));
    reader.readAsDataURL(blob);
  });

/** The selfie: the camera when the browser gives it, a chosen photo otherwise. The server checks it again whatever the page saw. */
async function selfieStep(presentation: Presentation, next: () => void): Promise<void> {
  const error = element('p', { className: 'error', role: 'alert' });
  const send = async (image: string, livenessFrames: string[] = []) => {
    await call('POST', '/selfie', { image, livenessFrames });
    stream?.getTracks().forEach((track) => track.stop());
    next();
  };
  let stream: MediaStream | undefined;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'user', width: { ideal: 720 }, height: { ideal: 960 } }, audio: false });
  } catch {
    stream = undefined;
  }
  if (stream === undefined) {
    const file = element('input', { id: 'photo', type: 'file', accept: 'image/jpeg,image/png' });
    file.setAttribute('capture', 'user');
    const use = element('button', { type: 'button' }, STRINGS.selfieUse);
    busy(
      use,
      async () => {
        const chosen = file.files?.[0];
        if (chosen === undefined) throw new Failure(422, 'selfie_refused', ['unreadable_image']);
        await send(await toBase64(chosen));
      },
      error,
    );
    show(
      frame(
        presentation,
        presentation.steps.indexOf('selfie'),
        STRINGS.selfieHeading,
        element('p', {}, STRINGS.selfieUploadHint),
        element('label', { htmlFor: 'photo' }, STRINGS.selfieUpload),
        file,
        use,
        error,
      ),
    );
    return;
  }
  const video = element('video', { autoplay: true, muted: true, playsInline: true });
  video.setAttribute('aria-label', STRINGS.selfieHint);
  video.srcObject = stream;
  // The camera guide (widget/src/face/) says what to fix, frame by frame; it loads its models only
  // now, and the photo can be taken whatever it says: the server checks it again.
  const hint = element('p', { className: 'hint', role: 'status' }, STRINGS.selfieGuideLoading);
  let guide: { stop(): void; capture(quality?: number): Promise<Blob>; livenessFrames(): Promise<Blob[]> } | undefined;
  void video
    .play()
    .then(async () => {
      const { startFaceGuide } = await import('./face/face-guide.js');
      guide = await startFaceGuide(video, presentation.faceModelsPath, {
        onFrame: (report) => {
          hint.textContent = report.problems.length > 0 ? (STRINGS.problems[report.problems[0]] ?? STRINGS.selfieHint) : report.ready ? STRINGS.selfieReady : STRINGS.selfieTurn;
        },
      });
    })
    .catch(() => {
      hint.textContent = STRINGS.selfieHint;
    });
  const take = element('button', { type: 'button' }, STRINGS.selfieTake);
  busy(
    take,
    async () => {
      let blob: Blob | null;
      if (guide !== undefined) {
        blob = await guide.capture(0.9);
      } else {
        const canvas = element('canvas', { width: video.videoWidth, height: video.videoHeight });
        canvas.getContext('2d')?.drawImage(video, 0, 0);
        blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.9));
      }
      if (blob === null) throw new Failure(422, 'selfie_refused', ['unreadable_image']);
      // The frames of the head turn or blink the guide saw (two or three): the server judges them again.
      const frames = await Promise.all(((await guide?.livenessFrames()) ?? []).map(toBase64));
      await send(await toBase64(blob), frames);
      guide?.stop();
    },
    error,
  );
  show(
    frame(
      presentation,
      presentation.steps.indexOf('selfie'),
      STRINGS.selfieHeading,
      element('p', {}, STRINGS.selfieHint),
      element('div', { className: 'camera' }, video, element('div', { className: 'oval' })),
      hint,
      take,
      error,
    ),
  );
}

/** The longer side a document photo is sent at: enough for its print, and within the service's 1 MiB once a JPEG. */
const DOCUMENT_SIDE_PX = 2_000;

/**
 * A document photo as it will be sent: drawn at most DOCUMENT_SIDE_PX on its longer side, measured
 * with the server's own measures (src/face-checks/document-measures.ts) and encoded as a JPEG, so the
 * page judges the very pixels the server judges again (and no EXIF leaves the phone).
 */
async function documentPhoto(source: CanvasImageSource, width: number, height: number): Promise<{ problems: string[]; image: Blob | null }> {
  const scale = Math.min(1, DOCUMENT_SIDE_PX / Math.max(width, height));
  const canvas = element('canvas', { width: Math.round(width * scale), height: Math.round(height * scale) });
  const context = canvas.getContext('2d', { willReadFrequently: true });
  if (context === null || canvas.width === 0) return { problems: ['unreadable_image'], image: null };
  context.drawImage(source, 0, 0, canvas.width, canvas.height);
  const problems = documentProblems(measureDocument(context.getImageData(0, 0, canvas.width, canvas.height)));
  if (problems.length > 0) return { problems, image: null };
  let image = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.9));
  if (image !== null && image.size > 1024 * 1024) image = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.7));
  return { problems: image === null ? ['unreadable_image'] : [], image };
}

/** The documents: which one (when the flow offers several), then each side, with the rear camera or a chosen photo. */
async function documentsStep(presentation: Presentation, next: () => void): Promise<void> {
  const index = presentation.steps.indexOf('documents');
  const choice =
    presentation.documents.length === 1
      ? presentation.documents[0]
      : await new Promise<Presentation['documents'][number]>((chosen) =>
          show(
            frame(
              presentation,
              index,
              STRINGS.documentHeading,
              element('p', {}, STRINGS.documentChoose),
              ...presentation.documents.map((option) => {
                const button = element('button', { type: 'button', className: 'secondary' }, STRINGS.documents[option.document] ?? option.document);
                button.addEventListener('click', () => chosen(option));
                return button;
              }),
            ),
          ),
        );
  for (const side of choice.sides) await documentSide(presentation, index, choice.document, side);
  next();
}

/** One side of the document, sent once the page's measures pass; resolves when the server accepted it. */
async function documentSide(presentation: Presentation, index: number, document: string, side: string): Promise<void> {
  const heading = STRINGS.documentSide(document, side);
  const error = element('p', { className: 'error', role: 'alert' });
  const send = async (measured: { problems: string[]; image: Blob | null }) => {
    if (measured.image === null) throw new Failure(422, 'document_refused', measured.problems);
    await call('POST', '/documents', { document, side, image: await toBase64(measured.image) });
  };
  let stream: MediaStream | undefined;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment', width: { ideal: 1920 }, height: { ideal: 1080 } }, audio: false });
  } catch {
    stream = undefined;
  }
  await new Promise<void>((accepted) => {
    if (stream === undefined) {
      const file = element('input', { id: 'document-photo', type: 'file', accept: 'image/jpeg,image/png' });
      file.setAttribute('capture', 'environment');
      const use = element('button', { type: 'button' }, STRINGS.selfieUse);
      busy(
        use,
        async () => {
          const chosen = file.files?.[0];
          if (chosen === undefined) throw new Failure(422, 'document_refused', ['unreadable_image']);
          const bitmap = await createImageBitmap(chosen).catch(() => {
            throw new Failure(422, 'document_refused', ['unreadable_image']);
          });
          await send(await documentPhoto(bitmap, bitmap.width, bitmap.height));
          accepted();
        },
        error,
      );
      show(
        frame(presentation, index, heading, element('p', {}, STRINGS.documentUploadHint), element('label', { htmlFor: 'document-photo' }, STRINGS.selfieUpload), file, use, error),
      );
      return;
    }
    const video = element('video', { autoplay: true, muted: true, playsInline: true });
    video.setAttribute('aria-label', STRINGS.documentHint);
    video.srcObject = stream;
    void video.play().catch(() => undefined);
    // The frame guide: the page measures the camera's frame every second and says what to fix.
    const hint = element('p', { className: 'hint', role: 'status' }, STRINGS.documentHint);
    const guide = setInterval(() => {
      if (video.videoWidth === 0) return;
      void documentPhoto(video, video.videoWidth, video.videoHeight).then(({ problems }) => {
        hint.textContent = problems.length > 0 ? (STRINGS.documentProblems[problems[0]] ?? STRINGS.documentHint) : STRINGS.documentReady;
      });
    }, 1_000);
    const take = element('button', { type: 'button' }, STRINGS.selfieTake);
    busy(
      take,
      async () => {
        await send(await documentPhoto(video, video.videoWidth, video.videoHeight));
        clearInterval(guide);
        stream?.getTracks().forEach((track) => track.stop());
        accepted();
      },
      error,
    );
    show(
      frame(
        presentation,
        index,
        heading,
        element('p', {}, STRINGS.documentHint),
        element('div', { className: 'camera document' }, video, element('div', { className: 'frame-guide' })),
        hint,
        take,
        error,
      ),
    );
  });
}

async function submitStep(presentation: Presentation): Promise<void> {
  show(frame(presentation, presentation.steps.length - 1, STRINGS.sending));
  const { redirectUrl } = await call<{ redirectUrl: string | null }>('POST', '/submit');
  sessionStorage.removeItem(storageKey);
  show(
    element('h1', { tabIndex: -1 }, STRINGS.submittedHeading),
    element('p', {}, STRINGS.submittedBody),
    ...(redirectUrl === null || framed ? [] : [element('p', {}, STRINGS.redirecting)]),
  );
  // The integrator's page gets the session id only; it reads the decision with its own key. Framed,
  // the page that frames it takes over: the redirect is for a page of its own.
  if (framed) tellParent({ type: 'complete' });
  else if (redirectUrl !== null) setTimeout(() => location.assign(redirectUrl), 1_200);
}

async function start(): Promise<void> {
  show(element('p', {}, STRINGS.loading));
  const presentation = await call<Presentation>('GET', '');
  document.documentElement.style.setProperty('--brand', presentation.branding.colour);
  document.title = STRINGS.title(presentation.branding.displayName);
  const order = presentation.steps;
  // A reload resumes after consent: the server says whether it was given.
  let index = presentation.status === 'in_progress' ? 1 : 0;
  const next = (): void => {
    const step = order[index];
    index += 1;
    const run =
      step === 'consent'
        ? async () => consentStep(presentation, next)
        : step === 'identity_number'
          ? async () => identityStep(presentation, next)
          : step === 'selfie'
            ? () => selfieStep(presentation, next)
            : step === 'documents'
              ? () => documentsStep(presentation, next)
              : () => submitStep(presentation);
    run().catch(fatal);
  };
  next();
}

start().catch(fatal);
