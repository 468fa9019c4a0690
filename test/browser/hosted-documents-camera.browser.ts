import { READY_MADE_PEOPLE, sandboxPerson } from '../../src/scopes/sandbox-world.js';
import { makeFakeDocumentCamera } from '../support/sample-documents.js';
import { checkPage, expect } from './fixtures.js';
import { api, withFakeCamera } from './hosted-flow.js';

/** Chromium whose camera films a synthetic passport page lying still on a table (test/support/sample-documents.ts), at 390 px. */
const test = withFakeCamera(() => makeFakeDocumentCamera());
test.use({ viewport: { width: 390, height: 844 } });

test('a person photographs the passport’s data page with the rear camera once the frame guide says it is good', async ({ page, baseURL }) => {
  const organization = await api(baseURL, 'POST', '/admin/v1/organizations', {
    body: { name: 'Passport bank', email: `passport-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test` },
  });
  await api(baseURL, 'PUT', `/admin/v1/organizations/${organization.id as string}/scopes`, { body: { scopes: ['nin'] } });
  const { key } = (await api(baseURL, 'POST', `/admin/v1/organizations/${organization.id as string}/keys`, { body: { environment: 'test' } })) as { key: string };
  const flow = await api(baseURL, 'POST', '/v1/verification_flows', {
    key,
    body: {
      name: 'Passport',
      steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }, { type: 'documents', kinds: ['passport'] }],
      branding: { displayName: 'Passport bank', colour: '#0b7285' },
      redirectUrl: 'https://bank.example/onboarding/done',
    },
  });
  const session = (await api(baseURL, 'POST', '/v1/verification_sessions', { key, body: { flowId: flow.id, customerId: 'cus_1' } })) as { id: string; hostedUrl: string };
  await page.route('https://bank.example/**', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><html lang="en"><title>Back at the bank</title><h1>Back at the bank</h1></html>' }),
  );

  await page.addInitScript(
    'const getUserMedia = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices); globalThis.cameraRequests = []; navigator.mediaDevices.getUserMedia = (constraints) => { globalThis.cameraRequests.push(JSON.stringify(constraints)); return getUserMedia(constraints); };',
  );
  await page.goto(session.hostedUrl);
  await page.getByRole('button', { name: 'I agree' }).click();
  await page.getByLabel('Number').fill(sandboxPerson(READY_MADE_PEOPLE[0]).nin);
  await page.getByRole('button', { name: 'Continue' }).click();

  // One document: no choice to make.
  await expect(page.getByRole('heading', { name: 'The photo page of your passport' })).toBeVisible();
  // Which camera the page asked for: the rear one.
  expect(await page.evaluate(() => (globalThis as unknown as { cameraRequests: string[] }).cameraRequests)).toEqual([expect.stringContaining('"facingMode":"environment"')]);
  await expect(page.getByRole('status')).toHaveText('Good. Take the photo now.', { timeout: 30_000 });
  await checkPage(page, 'hosted-document-camera');
  await page.getByRole('button', { name: 'Take photo' }).click();

  await page.waitForURL(`https://bank.example/onboarding/done?session=${session.id}`, { timeout: 60_000 });
  expect(await api(baseURL, 'GET', `/v1/verification_sessions/${session.id}`, { key })).toMatchObject({
    status: 'approved',
    documents: [{ document: 'passport', side: 'data_page' }],
  });
});
