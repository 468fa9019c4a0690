import type { TestApp } from './app.js';

let counter = 0;

function expectStatus(response: { status: number; body: unknown }, status: number, what: string): void {
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
}

/** An organization created through the admin API: pending unless `approved`, with `scopes` active when given. */
export async function createOrganization(app: TestApp, options: { approved?: boolean; scopes?: string[]; name?: string } = {}): Promise<{ id: string }> {
  counter += 1;
  const created = await app.admin('POST', '/admin/v1/organizations', { name: options.name ?? `Fixture organization ${counter}`, email: `fixture${counter}@example.com` });
  expectStatus(created, 201, 'create organization');
  const id = created.body.data.id as string;
  if (options.approved === true) expectStatus(await app.admin('POST', `/admin/v1/organizations/${id}/approve`), 200, 'approve organization');
  if (options.scopes !== undefined) expectStatus(await app.admin('PUT', `/admin/v1/organizations/${id}/scopes`, { scopes: options.scopes }), 200, 'set scopes');
  return { id };
}

/** A key issued through the admin API; `key` is the full key, shown once. */
export async function issueKey(
  app: TestApp,
  organizationId: string,
  options: { environment?: 'test' | 'live'; scopes?: string[]; name?: string } = {},
): Promise<{ id: string; key: string }> {
  const body: Record<string, unknown> = { environment: options.environment ?? 'test' };
  if (options.scopes !== undefined) body.scopes = options.scopes;
  if (options.name !== undefined) body.name = options.name;
  const issued = await app.admin('POST', `/admin/v1/organizations/${organizationId}/keys`, body);
  expectStatus(issued, 201, 'issue key');
  return { id: issued.body.data.id as string, key: issued.body.data.key as string };
}
