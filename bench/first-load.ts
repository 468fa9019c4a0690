/**
 * bench:flows's first load: the bytes a person's browser transfers on the hosted page, from the
 * page's address to the camera's first frame (consent and NIN given on the way), measured in
 * Chromium (Debian's, or CHROMIUM_PATH; its fake camera) against the service run as `npm start`
 * runs it, each run in a fresh browser context (an empty cache). Every response is counted as
 * transferred (Chrome DevTools Protocol `Network.loadingFinished.encodedDataLength`: headers and the
 * compressed body), by kind. The camera guide's models follow the first frame: the bytes up to the
 * guide's first report on a frame are given beside.
 */
import { chromium, type Page } from '@playwright/test';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../src/database/embedded-postgres.js';
import { SERVICE_NODE_FLAGS } from '../src/lifecycle/node-flags.js';
import { READY_MADE_PEOPLE, sandboxPerson } from '../src/scopes/sandbox-world.js';
import { status } from './bench-support.js';

export const FIRST_LOAD_TARGET_BYTES = 3 * 1024 * 1024;
export const PARTS = ['document', 'scripts', 'styles', 'models', 'wasm', 'api', 'other'] as const;
export type Part = (typeof PARTS)[number];
export type PartBytes = Record<Part, number>;

export interface FirstLoad {
  /** Transferred until the camera's first frame. */
  readonly toFirstFrame: PartBytes;
  /** Transferred until the camera guide's first report (its face models loaded). */
  readonly toGuide: PartBytes;
  readonly firstFrameMs: number;
  readonly guideMs: number;
}

function partOf(url: string): Part {
  const { pathname } = new URL(url);
  if (pathname.startsWith('/verify/api/')) return 'api';
  if (pathname.startsWith('/verify/models/')) return pathname.endsWith('.wasm') ? 'wasm' : 'models';
  if (pathname.endsWith('.js')) return 'scripts';
  if (pathname.endsWith('.css')) return 'styles';
  if (/^\/verify\/vss_/.test(pathname)) return 'document';
  return 'other';
}

const emptyParts = (): PartBytes => Object.fromEntries(PARTS.map((part) => [part, 0])) as PartBytes;
export const totalOf = (parts: PartBytes): number => PARTS.reduce((sum, part) => sum + parts[part], 0);

async function call(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await response.json()) as { data: Record<string, unknown> };
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}`);
  return answer.data;
}

/** Waits for `check` to answer true, polling every 50 ms, for `timeoutMs` at most. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs / 1_000} s`);
    await new Promise((wake) => setTimeout(wake, 50));
  }
}

/**
 * Notes, in the page's own clock, when a video element has its first frame (`loadeddata`), and keeps
 * every resource timing entry. An init script (Playwright's, through the DevTools protocol: the
 * page's CSP does not apply to it).
 */
const FIRST_FRAME_PROBE = `performance.setResourceTimingBufferSize(10000);
document.addEventListener('loadeddata', (event) => {
  if (event.target instanceof HTMLVideoElement && window.firstFrameAt === undefined) window.firstFrameAt = performance.now();
}, true);`;

interface PageTimings {
  readonly firstFrameAt: number | undefined;
  readonly resources: readonly { readonly name: string; readonly responseEnd: number }[];
  readonly now: number;
}

const pageTimings = (page: Page): Promise<PageTimings> =>
  page.evaluate(() => {
    const scope = globalThis as unknown as {
      firstFrameAt?: number;
      performance: { now(): number; getEntriesByType(type: string): { name: string; responseEnd: number }[] };
    };
    return {
      firstFrameAt: scope.firstFrameAt,
      resources: scope.performance.getEntriesByType('resource').map((entry) => ({ name: entry.name, responseEnd: entry.responseEnd })),
      now: scope.performance.now(),
    };
  });

/**
 * One first load. The bytes of each response come from the DevTools protocol; which responses came
 * before the first frame, from the page's resource timing (each response's end against the frame's
 * time, one clock): the page asks for the camera before it loads the guide, whose models arrive
 * meanwhile, so a count stopped when the bench sees the frame would depend on the bench's own delay.
 */
async function oneRun(page: Page, hostedUrl: string): Promise<FirstLoad> {
  const cdp = await page.context().newCDPSession(page);
  const urls = new Map<string, string>();
  const bytesByUrl = new Map<string, number>();
  cdp.on('Network.requestWillBeSent', (event: { requestId: string; request: { url: string } }) => urls.set(event.requestId, event.request.url));
  cdp.on('Network.loadingFinished', (event: { requestId: string; encodedDataLength: number }) => {
    const url = urls.get(event.requestId);
    if (url !== undefined && /^https?:/.test(url)) bytesByUrl.set(url, (bytesByUrl.get(url) ?? 0) + event.encodedDataLength);
  });
  await cdp.send('Network.enable');
  await page.addInitScript(FIRST_FRAME_PROBE);

  await page.goto(hostedUrl);
  await page.getByRole('button', { name: 'I agree' }).click();
  await page.getByLabel('Number').fill(sandboxPerson(READY_MADE_PEOPLE[0]!).nin);
  await page.getByRole('button', { name: 'Continue' }).click();
  await until(async () => (await pageTimings(page)).firstFrameAt !== undefined, 60_000, "the camera's first frame");
  await until(async () => ((await page.getByRole('status').textContent()) ?? '') !== 'Getting the camera guide ready…', 120_000, "the camera guide's first report");
  const timings = await pageTimings(page);
  // The last responses' loadingFinished may trail the page's own report by a moment.
  await new Promise((settle) => setTimeout(settle, 500));
  await cdp.detach();

  const firstFrameAt = timings.firstFrameAt!;
  const beforeFrame = new Set(timings.resources.filter((entry) => entry.responseEnd <= firstFrameAt).map((entry) => entry.name));
  const toFirstFrame = emptyParts();
  const toGuide = emptyParts();
  for (const [url, bytes] of bytesByUrl) {
    const part = partOf(url);
    toGuide[part] += bytes;
    // The document is not a resource entry: it came first.
    if (part === 'document' || beforeFrame.has(url)) toFirstFrame[part] += bytes;
  }
  return { toFirstFrame, toGuide, firstFrameMs: firstFrameAt, guideMs: timings.now };
}

/** `runs` first loads of the hosted page, each a new session in a new browser context. */
export async function measureFirstLoads(runs: number): Promise<FirstLoad[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ledger-bench-flows-'));
  const port = await freePort();
  const adminToken = `admin_${randomBytes(24).toString('base64url')}`;
  const baseUrl = `http://127.0.0.1:${port}`;
  status(`first load: starting the service on ${baseUrl} (embedded PostgreSQL under ${dataDir})`);
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, 'dist/src/main.js'], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(await freePort()),
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'],
  });
  try {
    await until(async () => child.exitCode === null && (await fetch(`${baseUrl}/health/ready`)).ok, 120_000, 'the service becoming ready');
    const admin = { authorization: `Bearer ${adminToken}` };
    const organization = await call(baseUrl, 'POST', '/admin/v1/organizations', admin, { name: 'Bench Ltd', email: 'bench-flows@example.com' });
    await call(baseUrl, 'PUT', `/admin/v1/organizations/${organization.id as string}/scopes`, admin, { scopes: ['nin', 'face_match'] });
    const { key } = (await call(baseUrl, 'POST', `/admin/v1/organizations/${organization.id as string}/keys`, admin, { environment: 'test' })) as { key: string };
    const integrator = { 'x-service-key': key };
    const flow = await call(baseUrl, 'POST', '/v1/verification_flows', integrator, {
      name: 'Onboarding',
      steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }, { type: 'selfie' }],
      branding: { displayName: 'Bench bank', colour: '#0b7285' },
    });
    const loads: FirstLoad[] = [];
    for (let run = 1; run <= runs; run++) {
      const session = await call(baseUrl, 'POST', '/v1/verification_sessions', integrator, { flowId: flow.id, customerId: `bench-${run}` });
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      try {
        loads.push(await oneRun(await context.newPage(), session.hostedUrl as string));
      } finally {
        await context.close();
      }
      status(`first load ${run}/${runs}: ${totalOf(loads.at(-1)!.toFirstFrame)} bytes to the first frame`);
    }
    return loads;
  } finally {
    await browser.close();
    child.kill('SIGTERM');
    await new Promise((exited) => (child.exitCode === null ? child.once('exit', exited) : exited(undefined)));
    await rm(dataDir, { recursive: true, force: true });
  }
}
