import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

const run = promisify(execFile);
const CLIENT = resolve('clients/typescript');
const TSC = resolve('node_modules/typescript/bin/tsc');

/**
 * The TypeScript client as another project gets it: its sources copied alone into an empty
 * directory outside the repository, installed with a plain `npm install` (from the registry),
 * built and packed; the tarball installed into a second project, type-checked there and run as
 * a small program against the running service.
 */
describe('The TypeScript client as a package', () => {
  /** The service and an integrator's key, started while npm works. */
  let service: Promise<{ app: TestApp; apiKey: string }>;
  let work: string;
  let tarball: string;

  /** npm with an environment of its own: nothing of a surrounding `npm run` leaks into it. */
  const npm = (cwd: string, args: string[]) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
    return run('npm', [...args, '--no-audit', '--no-fund'], { cwd, env, maxBuffer: 16 * 1024 * 1024 });
  };

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'ledger-client-package-'));
    service = (async () => {
      const app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: '1000000' } });
      const organizationId = (await createOrganization(app, { approved: true })).id;
      return { app, apiKey: (await issueKey(app, organizationId)).key };
    })();
    // Awaited by the test that uses it (and by afterAll); a failure to start is reported there.
    service.catch(() => undefined);
  });
  afterAll(async () => {
    await (await service.catch(() => undefined))?.app.close();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('installs alone with a plain npm install, builds to JavaScript and declarations, and packs', async () => {
    const source = join(work, 'source');
    await mkdir(source);
    for (const entry of ['package.json', 'tsconfig.json', 'README.md', 'src']) await cp(join(CLIENT, entry), join(source, entry), { recursive: true });

    await npm(source, ['install']);
    const { stdout } = await npm(source, ['pack', '--json', '--pack-destination', work]);
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    const files = packed!.files.map((file) => file.path).sort();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/webhooks.d.ts', 'dist/webhooks.js', 'package.json']));
    // Only what a dependent needs: no TypeScript sources, no tests.
    expect(files.filter((path) => !path.startsWith('dist/') && !['README.md', 'package.json'].includes(path))).toEqual([]);
    tarball = join(work, packed!.filename);
  });

  it('installs from its tarball into another project, type-checks there and runs against the service: checks, lists, webhook endpoints, flows and sessions, and a webhook verified', async () => {
    const project = join(work, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'integrator', version: '1.0.0', private: true, type: 'module' }));
    await npm(project, ['install', tarball]);
    expect(await readdir(join(project, 'node_modules', '@identity-verification-ledger', 'client', 'dist'))).toContain('index.d.ts');

    // A delivery signed as the service signs one, for the program to verify with the second of its two secrets.
    const secret = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`;
    const body = JSON.stringify({
      type: 'wallet.funded',
      timestamp: '2026-12-06T10:00:00.000Z',
      data: { organizationId: 'org_1', environment: 'test', fundingReference: 'fund_1', amountKobo: 5_000 },
    });
    const headers = { 'webhook-id': 'msg_evt_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    const signature = new Webhook(secret).sign(headers['webhook-id'], new Date(Number(headers['webhook-timestamp']) * 1000), body);
    const delivery = JSON.stringify({ body, headers: { ...headers, 'webhook-signature': signature }, secret });

    await writeFile(
      join(project, 'program.ts'),
      `import { createLedgerClient, verifyWebhook, type WebhookEvent } from '@identity-verification-ledger/client';

declare const process: { env: Record<string, string | undefined>; stdout: { write(text: string): void } };
const client = createLedgerClient({ baseUrl: process.env.BASE_URL!, apiKey: process.env.API_KEY!, timeoutMs: 10_000 });
const check = await client.verify('nin', { nin: '21440414976' });
const read = await client.getVerification(check.reference);
const listed: string[] = [];
for await (const summary of client.verifications({ scope: 'nin' }, 1)) listed.push(summary.reference);
const delivery = JSON.parse(process.env.DELIVERY!) as { body: string; headers: Record<string, string>; secret: string };
const event: WebhookEvent = verifyWebhook(delivery.body, delivery.headers, ['whsec_' + 'b'.repeat(43) + '=', delivery.secret]);
const funded = event.type === 'wallet.funded' ? event.data.amountKobo : null;
// Endpoints, flows and sessions through the client, against the service.
const endpoint = await client.webhookEndpoints.create({ url: 'https://hooks.example.com/ledger', eventTypes: ['verification_session.cancelled'] });
const endpoints = (await client.webhookEndpoints.list()).map((each) => each.id);
await client.webhookEndpoints.delete(endpoint.id);
const flow = await client.verificationFlows.create({ name: 'Onboarding', steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }] });
const session = await client.verificationSessions.create({ flowId: flow.id, customerId: 'customer-1' });
const cancelled = await client.verificationSessions.cancel(session.id);
process.stdout.write(
  JSON.stringify({
    firstName: check.result.firstName,
    read: read.reference === check.reference,
    listed,
    reference: check.reference,
    funded,
    endpoint: { secretShown: endpoint.secret.startsWith('whsec_'), listed: endpoints.includes(endpoint.id) },
    session: { hosted: session.hostedUrl.includes(session.id), status: cancelled.status, flowVersion: cancelled.flowVersion },
  }),
);
`,
    );
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: [], strict: true, outDir: 'out', skipLibCheck: true },
        files: ['program.ts'],
      }),
    );
    const compiled = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? 'tsc failed' }));
    expect(compiled.stdout).toBe('');

    const { app, apiKey } = await service;
    const { stdout } = await run(process.execPath, ['out/program.js'], {
      cwd: project,
      env: { PATH: process.env.PATH, BASE_URL: app.baseUrl, API_KEY: apiKey, DELIVERY: delivery },
    });
    const outcome = JSON.parse(stdout) as { firstName: string; read: boolean; listed: string[]; reference: string; funded: number };
    expect(outcome).toEqual({
      firstName: 'Blessing',
      read: true,
      listed: [outcome.reference],
      reference: expect.stringMatching(/^vrf_/),
      funded: 5_000,
      endpoint: { secretShown: true, listed: true },
      session: { hosted: true, status: 'cancelled', flowVersion: 1 },
    });
    expect(JSON.parse(await readFile(join(project, 'node_modules', '@identity-verification-ledger', 'client', 'package.json'), 'utf8'))).toMatchObject({
      name: '@identity-verification-ledger/client',
    });
  });
});
