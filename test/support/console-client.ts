import type { TestApp, TestResponse } from './app.js';

/**
 * A browser-like client of the console API: keeps its cookies (as a browser would, per name),
 * sends the CSRF token it was last given, and reads the session first when it has none.
 */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  csrfToken: string | undefined;

  constructor(private readonly app: TestApp) {}

  async session(): Promise<TestResponse> {
    const response = await this.call('GET', '/console/api/session');
    if (response.status === 200) this.csrfToken = response.body.data.csrfToken;
    return response;
  }

  /** A request with the cookies and, for writes, the CSRF token (`csrf: null` sends none, a string sends that one). */
  async call(method: string, path: string, body?: unknown, options: { csrf?: string | null; headers?: Record<string, string> } = {}): Promise<TestResponse> {
    if (method !== 'GET' && this.csrfToken === undefined && options.csrf === undefined) await this.session();
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (method !== 'GET') {
      const token = options.csrf === undefined ? this.csrfToken : options.csrf;
      if (token !== null && token !== undefined) headers['x-csrf-token'] = token;
    }
    const response = await fetch(`${this.app.baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (value === '' || /max-age=0/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // CSV and other text answers stay text.
    }
    const result = { status: response.status, headers: response.headers, body: parsed as TestResponse['body'] };
    const csrf = (parsed as { data?: { csrfToken?: unknown } } | undefined)?.data?.csrfToken;
    if (typeof csrf === 'string') this.csrfToken = csrf;
    return result;
  }

  async signUp(input: { organizationName: string; email: string; password: string }): Promise<TestResponse> {
    await this.session();
    return this.call('POST', '/console/api/signup', input);
  }
}

let counter = 0;
export function uniqueEmail(label = 'user'): string {
  counter += 1;
  return `${label}.${process.pid}.${counter}.${Date.now()}@example.com`;
}
