import type { FrameLocator, LaunchOptions, Page } from '@playwright/test';
import { CHROMIUM_PATH } from '../../playwright.config.js';
import { READY_MADE_PEOPLE, sandboxPerson } from '../../src/scopes/sandbox-world.js';
import { makeFakeCamera } from '../support/fake-camera.js';
import { onServiceDatabase } from './database.js';
import { checkPage, expect, test as base } from './fixtures.js';
import { BROWSER_ADMIN_TOKEN } from './server.js';

/** Chromium's flags for a fake camera filming `path`, a `.y4m` file. */
export const cameraArgs = (path: string): string[] => [
  '--no-sandbox',
  '--disable-dev-shm-usage',
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
  `--use-file-for-fake-video-capture=${path}`,
];

/** The fixtures' test in a Chromium whose camera films what `make` makes, once per worker. */
export function withFakeCamera(make: () => Promise<{ readonly path: string; dispose(): Promise<void> }>) {
  return base.extend<object, { launchOptions: LaunchOptions }>({
    launchOptions: [
      async ({}, use) => {
        const camera = await make();
        try {
          await use({ executablePath: CHROMIUM_PATH, args: cameraArgs(camera.path) });
        } finally {
          await camera.dispose();
        }
      },
      { scope: 'worker' },
    ],
  });
}

/**
 * The hosted page's browser tests' shared parts. Chromium with a fake camera: the sample face of
 * test/support/fake-camera.ts (Debian's ffmpeg), turning its head (the liveness step the guide asks for).
 */
export const test = withFakeCamera(() => makeFakeCamera());

export async function api(baseURL: string, method: string, path: string, options: { key?: string; body?: unknown } = {}) {
  const response = await fetch(`${baseURL}${path}`, {
    method,
    headers: {
      ...(options.key === undefined ? { authorization: `Bearer ${BROWSER_ADMIN_TOKEN}` } : { 'x-service-key': options.key }),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const body = (await response.json()) as { data: Record<string, unknown> };
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return body.data;
}

export interface HostedSession {
  readonly id: string;
  readonly hostedUrl: string;
  readonly clientSecret: string;
}

/** An organization with a test key and a flow of consent, NIN and selfie. */
export async function flowOf(baseURL: string, flow: Record<string, unknown> = {}): Promise<{ key: string; flowId: string }> {
  const organization = await api(baseURL, 'POST', '/admin/v1/organizations', {
    body: { name: 'Hosted page bank', email: `hosted-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test` },
  });
  await api(baseURL, 'PUT', `/admin/v1/organizations/${organization.id as string}/scopes`, { body: { scopes: ['nin', 'face_match'] } });
  const { key } = (await api(baseURL, 'POST', `/admin/v1/organizations/${organization.id as string}/keys`, { body: { environment: 'test' } })) as { key: string };
  const created = await api(baseURL, 'POST', '/v1/verification_flows', {
    key,
    body: {
      name: 'Onboarding',
      steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }, { type: 'selfie' }],
      branding: { displayName: 'Hosted page bank', colour: '#0b7285' },
      redirectUrl: 'https://bank.example/onboarding/done',
      ...flow,
    },
  });
  return { key, flowId: created.id as string };
}

export async function newSession(baseURL: string, key: string, flowId: string): Promise<HostedSession> {
  return (await api(baseURL, 'POST', '/v1/verification_sessions', { key, body: { flowId, customerId: 'cus_1' } })) as unknown as HostedSession;
}

/** An organization with a test key, a flow of consent, NIN and selfie, and a session of it. */
export async function sessionOf(baseURL: string, flow: Record<string, unknown> = {}): Promise<{ key: string; session: HostedSession }> {
  const { key, flowId } = await flowOf(baseURL, flow);
  return { key, session: await newSession(baseURL, key, flowId) };
}

/**
 * The session's time ran out: its stream gets the event the expiry sweep writes (the service runs on
 * the real clock, and a session lives 300 s at least).
 */
export async function expireSession(sessionId: string): Promise<void> {
  const appended = await onServiceDatabase(
    `select append_events(e.stream_id, -3, jsonb_build_array(jsonb_build_object(
       'id', gen_random_uuid(),
       'type', 'VerificationSessionExpired',
       'data', jsonb_build_object('sessionId', e.data->>'sessionId', 'organizationId', e.data->>'organizationId', 'environment', e.data->>'environment', 'schemaVersion', 1),
       'metadata', jsonb_build_object('correlationId', 'session-expiry-' || $2, 'causationId', null, 'actor', jsonb_build_object('type', 'system', 'id', 'ledger'),
         'occurredAt', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))))
     from events e where e.stream_id = $1 and e.revision = 0`,
    [`verificationSession-${sessionId}`, sessionId],
  );
  expect(appended).toBe(1);
}

export const BANK_PAGE = { status: 200, contentType: 'text/html', body: '<!doctype html><html lang="en"><title>Back at the bank</title><h1>Back at the bank</h1></html>' };

/**
 * Consent, NIN and a camera selfie through the hosted page, in `scope` (the page itself, or the
 * iframe that shows it), each step checked by axe and photographed as `${name}-…`.
 */
export async function completeFlow(page: Page, scope: Page | FrameLocator, name: string): Promise<void> {
  await expect(scope.getByRole('heading', { name: 'Hosted page bank wants to verify your identity' })).toBeVisible();
  await checkPage(page, `${name}-consent`);
  await scope.getByRole('button', { name: 'I agree' }).click();

  await scope.getByLabel('Number').fill(sandboxPerson(READY_MADE_PEOPLE[0]).nin);
  await checkPage(page, `${name}-identity`);
  await scope.getByRole('button', { name: 'Continue' }).click();

  await expect(scope.getByRole('button', { name: 'Take photo' })).toBeVisible();
  // The camera's first frame has arrived (a function, not page text: the page's CSP forbids eval).
  await expect.poll(() => scope.locator('video').evaluate((video) => (video as unknown as { videoWidth: number }).videoWidth)).toBeGreaterThan(0);
  // The camera guide (its models from the service) saw one good face and the head turn.
  await expect(scope.getByRole('status')).toHaveText('Good. Take the photo now.', { timeout: 90_000 });
  await checkPage(page, `${name}-selfie`);
  // A refused photo is taken again, as the page asks a person to: the fake camera's face keeps
  // turning, and a frame taken at the end of the turn can score under the live floor (seen once in
  // a few runs). Three tries at most; each refusal is noted on the test.
  for (let attempt = 1; ; attempt++) {
    await scope.getByRole('button', { name: 'Take photo' }).click();
    const outcome = await Promise.race([
      scope
        .getByRole('alert')
        .filter({ hasText: /\S/ })
        .waitFor({ timeout: 60_000 })
        .then(
          () => 'refused' as const,
          () => 'timeout' as const,
        ),
      scope
        .getByRole('heading', { name: 'Take a selfie' })
        .waitFor({ state: 'detached', timeout: 60_000 })
        .then(
          () => 'sent' as const,
          () => 'timeout' as const,
        ),
    ]);
    if (outcome === 'sent') return;
    expect(outcome, 'the selfie was neither sent nor refused').toBe('refused');
    test.info().annotations.push({ type: 'selfie refused', description: (await scope.getByRole('alert').textContent()) ?? '' });
    expect(attempt, 'the selfie was refused three times').toBeLessThan(3);
    await expect(scope.getByRole('status')).toHaveText('Good. Take the photo now.', { timeout: 90_000 });
  }
}
