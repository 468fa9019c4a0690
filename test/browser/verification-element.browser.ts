import type { Page } from '@playwright/test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkPage, expect } from './fixtures.js';
import { api, completeFlow, expireSession, flowOf, newSession, sessionOf, test } from './hosted-flow.js';

/**
 * `<verification-flow>` on an integrator's page: a loopback server of the test's own (another origin
 * than the service's) serves a page under a strict CSP of its own that loads /verify/element.js and
 * records the element's events and every message the window receives.
 */
interface Integrator {
  readonly origin: string;
  /** Serves `elements` (the markup of the elements) at `path`. */
  show(path: string, elements: string): void;
  close(): Promise<void>;
}

async function integrator(baseURL: string): Promise<Integrator> {
  const pages = new Map<string, string>();
  const nonce = 'integrator-nonce-0123';
  const server: Server = createServer((request, response) => {
    const elements = pages.get(request.url ?? '');
    if (elements === undefined) return void response.writeHead(404).end();
    response
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        // The element needs the service's origin for its script and its frame, and nothing inline of its own.
        'content-security-policy': `default-src 'none'; script-src ${baseURL} 'nonce-${nonce}'; frame-src ${baseURL}; style-src 'self'`,
      })
      .end(
        `<!doctype html><html lang="en"><head><title>Open an account</title>
<script type="module" src="${baseURL}/verify/element.js"></script>
<script nonce="${nonce}">
  window.flowEvents = [];
  window.messages = [];
  for (const type of ['verification-complete', 'verification-error']) document.addEventListener(type, (event) => window.flowEvents.push({ type, detail: event.detail }));
  window.addEventListener('message', (event) => window.messages.push({ origin: event.origin, data: event.data }));
</script></head>
<body><main><h1>Open an account</h1>${elements}</main></body></html>`,
      );
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    show: (path, elements) => void pages.set(path, elements),
    close: async () => {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    },
  };
}

type Recorded = { flowEvents: { type: string; detail: unknown }[]; messages: { origin: string; data: unknown }[] };
const recorded = (page: Page): Promise<Recorded> =>
  page.evaluate(() => ({ flowEvents: (globalThis as unknown as Recorded).flowEvents, messages: (globalThis as unknown as Recorded).messages }));

test.use({ viewport: { width: 390, height: 844 } });

test('an integrator embeds the flow with <verification-flow> and hears verification-complete with the session id only', async ({ page, baseURL }) => {
  const site = await integrator(baseURL);
  try {
    const { key, session } = await sessionOf(baseURL, { allowedOrigins: [site.origin] });
    site.show('/onboarding', `<verification-flow session-id="${session.id}" client-secret="${session.clientSecret}"></verification-flow>`);
    const script = await fetch(`${baseURL}/verify/element.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toContain('max-age=3600');
    expect((await fetch(`${baseURL}/verify/element.js`, { headers: { 'if-none-match': script.headers.get('etag') ?? '' } })).status).toBe(304);

    await page.goto(`${site.origin}/onboarding`);
    const frame = page.frameLocator('verification-flow iframe');
    await expect(frame.getByRole('heading', { name: 'Hosted page bank wants to verify your identity' })).toBeVisible();
    // A message that claims the flow is done, from the integrator's own window: not the service's origin, not the element's iframe.
    await page.evaluate(
      (id) => (globalThis as unknown as { postMessage(message: unknown, origin: string): void }).postMessage({ source: 'verification-flow', type: 'complete', sessionId: id }, '*'),
      session.id,
    );
    await completeFlow(page, frame, 'element');

    await expect.poll(async () => (await recorded(page)).flowEvents, { timeout: 60_000 }).toEqual([{ type: 'verification-complete', detail: { sessionId: session.id } }]);
    await expect(frame.getByRole('heading', { name: 'Submitted' })).toBeVisible();
    await checkPage(page, 'element-submitted');
    // The page posted the session id and how it ended, nothing else, from the service's origin; the frame stayed (no redirect inside it).
    const { messages } = await recorded(page);
    expect(messages.filter((message) => message.origin === baseURL)).toEqual([{ origin: baseURL, data: { source: 'verification-flow', sessionId: session.id, type: 'complete' } }]);
    expect(page.frames().some((candidate) => candidate.url().startsWith('https://bank.example'))).toBe(false);
    expect(await api(baseURL, 'GET', `/v1/verification_sessions/${session.id}`, { key })).toMatchObject({ status: 'approved' });
  } finally {
    await site.close();
  }
});

test('an expired session shows a clear message in the element, fires verification-error, and never asks for the camera', async ({ page, baseURL }) => {
  const site = await integrator(baseURL);
  try {
    const { session } = await sessionOf(baseURL, { allowedOrigins: [site.origin] });
    await expireSession(session.id);
    site.show('/expired', `<verification-flow session-id="${session.id}" client-secret="${session.clientSecret}"></verification-flow>`);
    await page.addInitScript(
      'window.cameraRequests = 0; const ask = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices); navigator.mediaDevices.getUserMedia = (c) => { window.cameraRequests += 1; return ask(c); };',
    );
    await page.goto(`${site.origin}/expired`);
    const frame = page.frameLocator('verification-flow iframe');
    await expect(frame.getByRole('heading', { name: 'This link has expired. Ask for a new one to verify your identity.' })).toBeVisible();
    await expect.poll(async () => (await recorded(page)).flowEvents).toEqual([{ type: 'verification-error', detail: { sessionId: session.id, code: 'session_expired' } }]);
    await checkPage(page, 'element-expired');
    await expect(frame.locator('video, input, button')).toHaveCount(0);
    for (const candidate of page.frames()) expect(await candidate.evaluate(() => (globalThis as unknown as { cameraRequests: number }).cameraRequests)).toBe(0);
  } finally {
    await site.close();
  }
});

test("a client secret used for another session, or another organization's, is refused with a clear message", async ({ page, baseURL }) => {
  const site = await integrator(baseURL);
  try {
    const { key, flowId } = await flowOf(baseURL, { allowedOrigins: [site.origin] });
    const first = await newSession(baseURL, key, flowId);
    const second = await newSession(baseURL, key, flowId);
    const { session: elsewhere } = await sessionOf(baseURL, { allowedOrigins: [site.origin] });
    site.show(
      '/refused',
      [
        `<verification-flow id="reused" session-id="${second.id}" client-secret="${first.clientSecret}"></verification-flow>`,
        `<verification-flow id="foreign" session-id="${first.id}" client-secret="${elsewhere.clientSecret}"></verification-flow>`,
        // A hosted URL on another service than the script's: the element loads nothing.
        `<verification-flow id="stranger" hosted-url="https://verify.example/verify/${first.id}#${first.clientSecret}"></verification-flow>`,
      ].join(''),
    );
    await page.goto(`${site.origin}/refused`);
    for (const id of ['reused', 'foreign']) {
      await expect(page.frameLocator(`#${id} iframe`).getByRole('heading', { name: 'This link is not valid. Ask for a new one.' })).toBeVisible();
    }
    await expect
      .poll(async () => (await recorded(page)).flowEvents.map((event) => JSON.stringify(event)).sort())
      .toEqual(
        [
          { type: 'verification-error', detail: { sessionId: first.id, code: 'invalid_embedding' } },
          { type: 'verification-error', detail: { sessionId: second.id, code: 'invalid_secret' } },
          { type: 'verification-error', detail: { sessionId: first.id, code: 'invalid_secret' } },
        ]
          .map((event) => JSON.stringify(event))
          .sort(),
      );
    await checkPage(page, 'element-refused');
    expect(page.frames().filter((candidate) => candidate.url().includes('verify.example'))).toEqual([]);
    // The sessions are untouched: a wrong secret starts nothing.
    for (const session of [first, second]) expect(await api(baseURL, 'GET', `/v1/verification_sessions/${session.id}`, { key })).toMatchObject({ status: 'created' });
  } finally {
    await site.close();
  }
});
