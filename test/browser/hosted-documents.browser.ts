import { READY_MADE_PEOPLE, sandboxPerson } from '../../src/scopes/sandbox-world.js';
import { documentPhoto } from '../support/sample-documents.js';
import { toJpeg } from '../support/sample-faces.js';
import { checkPage, expect, test } from './fixtures.js';
import { api, BANK_PAGE } from './hosted-flow.js';

/** The hosted page's documents step at 390 px, the camera refused: photos of a synthetic licence chosen as files. */
test.use({ viewport: { width: 390, height: 844 } });

const file = (name: string, options: Parameters<typeof documentPhoto>[0]) => ({ name, mimeType: 'image/jpeg', buffer: Buffer.from(toJpeg(documentPhoto(options), 90)) });

test('a person without a camera chooses the driver’s licence, is told on the page that a blurred photo will not do, and sends both sides', async ({ page, baseURL }) => {
  const organization = await api(baseURL, 'POST', '/admin/v1/organizations', {
    body: { name: 'Documents bank', email: `documents-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test` },
  });
  await api(baseURL, 'PUT', `/admin/v1/organizations/${organization.id as string}/scopes`, { body: { scopes: ['nin'] } });
  const { key } = (await api(baseURL, 'POST', `/admin/v1/organizations/${organization.id as string}/keys`, { body: { environment: 'test' } })) as { key: string };
  const flow = await api(baseURL, 'POST', '/v1/verification_flows', {
    key,
    body: {
      name: 'Documents',
      steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }, { type: 'documents', kinds: ['passport', 'drivers_licence'] }],
      branding: { displayName: 'Documents bank', colour: '#0b7285' },
      redirectUrl: 'https://bank.example/onboarding/done',
    },
  });
  const session = (await api(baseURL, 'POST', '/v1/verification_sessions', { key, body: { flowId: flow.id, customerId: 'cus_1' } })) as { id: string; hostedUrl: string };
  const [blurred, front, back] = [file('front.jpg', { blurPx: 1 }), file('front.jpg', {}), file('back.jpg', { face: null, seed: 2 })];

  await page.route('https://bank.example/**', (route) => route.fulfill(BANK_PAGE));
  await page.addInitScript('navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException("Permission denied", "NotAllowedError"));');
  await page.goto(session.hostedUrl);
  await page.getByRole('button', { name: 'I agree' }).click();
  await page.getByLabel('Number').fill(sandboxPerson(READY_MADE_PEOPLE[0]).nin);
  await page.getByRole('button', { name: 'Continue' }).click();

  await expect(page.getByText('Which document will you photograph?')).toBeVisible();
  await expect(page.getByText('Step 3 of 3')).toBeVisible();
  await checkPage(page, 'hosted-documents-choice');
  await page.getByRole('button', { name: 'Driver’s licence'.replace('’', "'") }).click();

  await expect(page.getByRole('heading', { name: "The front of your driver's licence" })).toBeVisible();
  await page.getByLabel('Choose a photo').setInputFiles(blurred);
  await page.getByRole('button', { name: 'Use this photo' }).click();
  // Refused on the page by the server's own measures: nothing was sent.
  await expect(page.getByRole('alert')).toHaveText('The photo is blurred. Hold still and let the camera focus.');
  await checkPage(page, 'hosted-document-refused');
  expect((await api(baseURL, 'GET', `/v1/verification_sessions/${session.id}`, { key })).documents).toEqual([]);

  await page.getByLabel('Choose a photo').setInputFiles(front);
  await page.getByRole('button', { name: 'Use this photo' }).click();
  await expect(page.getByRole('heading', { name: "The back of your driver's licence" })).toBeVisible({ timeout: 60_000 });
  await checkPage(page, 'hosted-document-back');
  await page.getByLabel('Choose a photo').setInputFiles(back);
  await page.getByRole('button', { name: 'Use this photo' }).click();

  await page.waitForURL(`https://bank.example/onboarding/done?session=${session.id}`, { timeout: 60_000 });
  expect(await api(baseURL, 'GET', `/v1/verification_sessions/${session.id}`, { key })).toMatchObject({
    status: 'approved',
    documents: [
      { document: 'drivers_licence', side: 'front' },
      { document: 'drivers_licence', side: 'back' },
    ],
  });
});
