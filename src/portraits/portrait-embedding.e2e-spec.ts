import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';
import { describeOnPostgresProjectOnly } from '../../test/support/store-independent.js';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * An integrator's own page shows the portrait of a check in an `<img>` through its signed link:
 * in a real Chromium, the page served from another site (localhost) than the API (127.0.0.1).
 */
describeOnPostgresProjectOnly('Portrait links embedded by another site', 'the HTTP surface does not depend on the event store', () => {
  let app: TestApp;
  let site: Server;
  let browser: Browser;
  let portraitUrl: string;

  beforeAll(async () => {
    app = await startTestApp();
    const organization = await createOrganization(app, { approved: true });
    const { key } = await issueKey(app, organization.id);
    const check = await app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: { 'x-service-key': key } });
    expect(check.status).toBe(201);
    portraitUrl = check.body.data.result.portraitUrl as string;
    // The integrator's page: nothing but the image, whose link it got from its own back end.
    site = createServer((request, response) => {
      const src = new URL(request.url ?? '/', 'http://localhost').searchParams.get('src') ?? '';
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><img id="portrait" alt="portrait" src="${src.replace(/"/g, '&quot;')}">`);
    });
    await new Promise<void>((listening) => site.listen(0, 'localhost', listening));
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((closed) => site?.close(closed));
    await app?.close();
  });

  it('loads in an <img> on a page of another site: the signed, expiring link is the credential', async () => {
    expect(new URL(portraitUrl).hostname).toBe('127.0.0.1');
    const page = await browser.newPage();
    try {
      const { port } = site.address() as AddressInfo;
      await page.goto(`http://localhost:${port}/?src=${encodeURIComponent(portraitUrl)}`);
      const loaded = await page.locator('#portrait').evaluate(
        (image: { complete: boolean; naturalWidth: number; addEventListener(type: string, listener: () => void): void }) =>
          new Promise<number>((done) => {
            if (image.complete) done(image.naturalWidth);
            image.addEventListener('load', () => done(image.naturalWidth));
            image.addEventListener('error', () => done(0));
          }),
      );
      expect(loaded).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });
});
