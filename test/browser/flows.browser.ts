import type { Page } from '@playwright/test';
import { READY_MADE_PEOPLE, sandboxPerson } from '../../src/scopes/sandbox-world.js';
import { cutSample, toJpeg } from '../support/sample-faces.js';
import { checkPage, consoleApi, expect, signUp, test } from './fixtures.js';
import { operatorPage } from './operator.js';
import { BROWSER_ADMIN_TOKEN } from './server.js';

const person = sandboxPerson(READY_MADE_PEOPLE[0]);

async function call(baseURL: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${baseURL}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = (await response.json()) as { data: Record<string, unknown> };
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return parsed.data;
}

/** A session of the flow started from the API and taken by its client secret through the hosted page's calls to submission: the flow sends it to review. */
async function sessionInReview(baseURL: string, key: string, flowId: string): Promise<string> {
  const session = (await call(baseURL, 'POST', '/v1/verification_sessions', { 'x-service-key': key }, { flowId, customerId: 'cus_browser_42' })) as {
    id: string;
    clientSecret: string;
  };
  const bearer = { authorization: `Bearer ${session.clientSecret}` };
  const path = `/verify/api/sessions/${session.id}`;
  const shown = (await call(baseURL, 'GET', path, bearer)) as { consent: { textVersion: number; textHash: string } };
  await call(baseURL, 'POST', `${path}/consent`, bearer, { textVersion: shown.consent.textVersion, textHash: shown.consent.textHash });
  await call(baseURL, 'POST', `${path}/identity`, bearer, { kind: 'nin', number: person.nin });
  await call(baseURL, 'POST', `${path}/selfie`, bearer, { image: Buffer.from(toJpeg(cutSample('authorWebcam'))).toString('base64') });
  await call(baseURL, 'POST', `${path}/submit`, bearer);
  expect(((await call(baseURL, 'GET', `/v1/verification_sessions/${session.id}`, { 'x-service-key': key })) as { status: string }).status).toBe('needs_review');
  return session.id;
}

/** Both images of the evidence loaded (a broken image has no natural width). */
async function expectEvidenceShown(page: Page): Promise<void> {
  for (const name of ['The selfie the person took', "The identity record's portrait"]) {
    const image = page.getByRole('img', { name });
    await expect(image).toBeVisible();
    await expect.poll(() => image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth), { message: `${name} loaded` }).toBeGreaterThan(0);
  }
}

test('flows: an owner creates a flow in the console, with the field errors beside the fields, and a link; a session sent to review is approved by the owner and another declined by an operator', async ({
  page,
  browser,
  baseURL,
}) => {
  test.setTimeout(240_000);
  await signUp(page);
  const organizationId = ((await (await consoleApi(page, 'GET', '/session')).json()) as { data: { organization: { id: string } } }).data.organization.id;
  await call(baseURL, 'PUT', `/admin/v1/organizations/${organizationId}/scopes`, { authorization: `Bearer ${BROWSER_ADMIN_TOKEN}` }, { scopes: ['nin', 'face_match'] });
  const issued = await consoleApi(page, 'POST', '/keys', { environment: 'test', name: 'flows' });
  expect(issued.status()).toBe(201);
  const key = ((await issued.json()) as { data: { key: string } }).data.key;

  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Flows' }).click();
  await expect(page.getByRole('heading', { name: 'Verification flows', level: 1 })).toBeVisible();
  await expect(page.getByText('No flows in test yet.')).toBeVisible();
  await checkPage(page, 'flows-empty');
  await page.getByRole('link', { name: 'New flow' }).click();
  await expect(page.getByRole('heading', { name: 'New flow', level: 1 })).toBeVisible();

  // Every face match falls within 100 points below a threshold of 100: the session goes to review.
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Onboarding with review');
  await page.getByRole('textbox', { name: 'Face match threshold' }).fill('100');
  await page.getByRole('textbox', { name: 'Review margin (points)' }).fill('100');
  await page.getByRole('textbox', { name: 'Session lifetime (seconds)' }).fill('60');
  await page.getByRole('textbox', { name: 'Allowed origins' }).fill('https://acme.example/with/a/path');
  await page.getByRole('button', { name: 'Create the flow' }).click();
  // The API's own field errors, each beside its field.
  await expect(page.getByText('sessionLifetimeSeconds must be an integer from 300 to 86400')).toBeVisible();
  await expect(page.getByText('allowedOrigins[0] must be an origin: https://host[:port], no path')).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Session lifetime (seconds)' })).toHaveAttribute('aria-invalid', 'true');
  await checkPage(page, 'flow-field-errors');
  await page.getByRole('textbox', { name: 'Session lifetime (seconds)' }).fill('1800');
  await page.getByRole('textbox', { name: 'Allowed origins' }).fill('https://acme.example');
  await page.getByRole('button', { name: 'Create the flow' }).click();
  await expect(page.getByRole('heading', { name: 'Onboarding with review (version 1)', level: 1 })).toBeVisible();
  const flowId = new URL(page.url()).pathname.split('/').pop() as string;
  expect(flowId).toMatch(/^vfl_/);

  // The next version: the form holds the first one's definition; a changed lifetime is published as version 2.
  await expect(page.getByRole('textbox', { name: 'Face match threshold' })).toHaveValue('100');
  await page.getByRole('textbox', { name: 'Session lifetime (seconds)' }).fill('900');
  await page.getByRole('button', { name: 'Publish version 2' }).click();
  await expect(page.getByRole('heading', { name: 'Onboarding with review (version 2)', level: 1 })).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Session lifetime (seconds)' })).toHaveValue('900');

  await page.getByRole('button', { name: 'Create a link' }).click();
  await expect(page.getByTestId('flow-link')).toContainText(`/verify/start/vln_`);
  await checkPage(page, 'flow');

  const approvedId = await sessionInReview(baseURL, key, flowId);
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Sessions' }).click();
  await expect(page.getByRole('heading', { name: 'Verification sessions', level: 1 })).toBeVisible();
  await page.getByRole('combobox', { name: 'Status' }).click();
  await page.getByRole('option', { name: 'needs review' }).click();
  await expect(page.getByRole('link', { name: approvedId })).toBeVisible();
  await checkPage(page, 'sessions');
  await page.getByRole('link', { name: approvedId }).click();
  await expectEvidenceShown(page);
  await expect(page.getByTestId('face-match')).toContainText('face match just below the threshold');
  await expect(page.getByRole('table', { name: "The session's steps" })).toContainText('decided');
  // Nothing the person gave is in the page's address.
  expect(page.url()).not.toContain(person.nin);
  await checkPage(page, 'session-review');
  await page.getByRole('radio', { name: 'Approve: the faces match' }).check();
  await page.getByRole('button', { name: 'Approve the session' }).click();
  await expect(page.getByText('approved by the organization: the faces match')).toBeVisible();
  await expect(page.getByRole('form', { name: 'Decide the session' })).toBeHidden();
  await checkPage(page, 'session-approved');
  expect(((await call(baseURL, 'GET', `/v1/verification_sessions/${approvedId}`, { 'x-service-key': key })) as { status: string }).status).toBe('approved');

  const declinedId = await sessionInReview(baseURL, key, flowId);
  const operator = await operatorPage(browser);
  await operator.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Sessions in review' }).click();
  await expect(operator.getByRole('heading', { name: 'Sessions in review', level: 1 })).toBeVisible();
  await checkPage(operator, 'operator-sessions-in-review');
  await operator.getByRole('link', { name: declinedId }).click();
  await expectEvidenceShown(operator);
  await expect(operator.getByText('cus_browser_42')).toHaveCount(0);
  await checkPage(operator, 'operator-session-review');
  await operator.getByRole('radio', { name: 'Decline: suspected spoof (photo, screen, mask)' }).check();
  await operator.getByRole('button', { name: 'Decline the session' }).click();
  await expect(operator.getByText('declined by an operator: suspected spoof (photo, screen, mask)')).toBeVisible();
  expect(((await call(baseURL, 'GET', `/v1/verification_sessions/${declinedId}`, { 'x-service-key': key })) as { status: string }).status).toBe('declined');
});

test('a flow made through the API with documents before the selfie and liveness off keeps them when its next version is published in the console', async ({ page, baseURL }) => {
  await signUp(page);
  const issued = await consoleApi(page, 'POST', '/keys', { environment: 'test', name: 'flows' });
  expect(issued.status()).toBe(201);
  const headers = { 'x-service-key': ((await issued.json()) as { data: { key: string } }).data.key };
  const steps = [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }, { type: 'documents', kinds: ['passport', 'drivers_licence'] }, { type: 'selfie' }];
  const made = (await call(baseURL, 'POST', '/v1/verification_flows', headers, {
    name: 'Documents first',
    steps,
    decision: { faceMatchThreshold: 85, reviewMarginPoints: 5, liveness: 'off' },
  })) as { id: string };

  await page.goto(`/console/flows/${made.id}`);
  await expect(page.getByRole('heading', { name: 'Documents first (version 1)', level: 1 })).toBeVisible();
  await expect(page.getByRole('checkbox', { name: "Passport's data page" })).toBeChecked();
  await expect(page.getByRole('checkbox', { name: "Driver's licence, front and back" })).toBeChecked();
  await expect(page.getByRole('checkbox', { name: "Voter's card", exact: true })).not.toBeChecked();
  await expect(page.getByRole('switch', { name: /^Liveness/ })).not.toBeChecked();
  await checkPage(page, 'flow-documents');
  await page.getByRole('textbox', { name: 'Session lifetime (seconds)' }).fill('900');
  await page.getByRole('button', { name: 'Publish version 2' }).click();
  await expect(page.getByRole('heading', { name: 'Documents first (version 2)', level: 1 })).toBeVisible();

  // What the console published is the first version's definition but for the lifetime: nothing dropped, nothing reordered.
  expect(await call(baseURL, 'GET', `/v1/verification_flows/${made.id}`, headers)).toMatchObject({
    version: 2,
    steps,
    decision: { faceMatchThreshold: 85, reviewMarginPoints: 5, liveness: 'off' },
    sessionLifetimeSeconds: 900,
  });
});
