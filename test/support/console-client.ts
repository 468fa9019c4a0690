import type { TestApp, TestResponse } from './app.js';
import { consoleOpenApiValidator } from './openapi-validator.js';

/**
 * A browser-like client of the console API: keeps its cookies (as a browser would, per name),
 * sends the CSRF token it was last given, and reads the session first when it has none. Every
 * answer from /console/api is checked against the console's OpenAPI document (openapi/console.json):
 * a request no operation documents, a status it does not document, a body that does not match its
 * schema, or a request body the server took that the document does not allow, throws.
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
    if (path.startsWith('/console/api/')) {
      const validator = consoleOpenApiValidator();
      const problems = validator.check({
        method,
        url: path,
        status: response.status,
        contentType: response.headers.get('content-type'),
        text,
        headers: [...response.headers.keys()],
      });
      // A body the server took must be one the document allows (a refused one may be anything: the tests send bad ones on purpose).
      const template = validator.operation(method, path)?.template;
      const empty = body !== null && typeof body === 'object' && Object.keys(body).length === 0;
      if (response.ok && body !== undefined && !empty && template !== undefined) problems.push(...validator.checkRequestBody(method, template, body));
      if (problems.length > 0) throw new Error(`The answer does not match the console's OpenAPI document:\n${problems.join('\n')}`);
    }
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

  /** The sign-up request alone: 202 `{ sent: true }` and no session, whether or not the address had an account. */
  async signUp(input: { organizationName: string; email: string; password: string }): Promise<TestResponse> {
    await this.session();
    return this.call('POST', '/console/api/signup', input);
  }

  /** Signs up, then signs in as the new account: the sign-in's answer (200 and the session), or the sign-up's when it was refused. */
  async signUpAndSignIn(input: { organizationName: string; email: string; password: string }): Promise<TestResponse> {
    const signedUp = await this.signUp(input);
    if (signedUp.status !== 202) return signedUp;
    return this.call('POST', '/console/api/login', { email: input.email, password: input.password });
  }
}

let counter = 0;
export function uniqueEmail(label = 'user'): string {
  counter += 1;
  return `${label}.${process.pid}.${counter}.${Date.now()}@example.com`;
}
