import { describe, expect, it, jest } from '@jest/globals';
import type { ArgumentsHost } from '@nestjs/common';
import { ErrorFilter } from './error.filter.js';
import { Conflict, InsufficientBalance, InvariantViolated, VerificationAlreadyExists, VerificationAlreadyFinished, VerificationNotRequested } from './errors.js';

/** What the filter sends for `exception`, through a reply that records it. */
function answer(exception: unknown): { status: number; body: unknown } {
  const sent: { status: number; body: unknown } = { status: 0, body: undefined };
  const reply = {
    status: (status: number) => ((sent.status = status), reply),
    header: () => reply,
    send: (body: unknown) => ((sent.body = body), reply),
  };
  const host = { switchToHttp: () => ({ getResponse: () => reply }) } as unknown as ArgumentsHost;
  new ErrorFilter().catch(exception, host);
  return sent;
}

describe('The error filter', () => {
  it('answers a broken invariant as an internal error, without its message, and logs it', () => {
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(answer(new InvariantViolated('wallet-org_x.test skipped from revision 3 to 5'))).toEqual({
        status: 500,
        body: { status: false, error: { code: 'internal_error', message: 'An unexpected error occurred', details: {} } },
      });
      const output = [...logged.mock.calls, ...stdout.mock.calls, ...stderr.mock.calls].map((call) => String(call[0])).join('');
      expect(output).toContain('skipped from revision 3 to 5');
    } finally {
      logged.mockRestore();
      stdout.mockRestore();
      stderr.mockRestore();
    }
  });

  it('answers conflicts as 409 with their own stable codes', () => {
    const cases: Array<[Conflict, string]> = [
      [new Conflict('busy'), 'conflict'],
      [new VerificationAlreadyExists('in use'), 'verification_exists'],
      [new VerificationAlreadyFinished('finished'), 'verification_finished'],
      [new VerificationNotRequested('not requested'), 'verification_not_requested'],
    ];
    for (const [error, code] of cases) {
      expect(error).toBeInstanceOf(Conflict);
      expect(answer(error)).toEqual({ status: 409, body: { status: false, error: { code, message: error.message, details: {} } } });
    }
  });

  it('keeps the message and details of request errors', () =>
    expect(answer(new InsufficientBalance('too low', { balanceKobo: 5 }))).toEqual({
      status: 402,
      body: { status: false, error: { code: 'insufficient_balance', message: 'too low', details: { balanceKobo: 5 } } },
    }));

  it('answers a database host or network that has no route as 503, not as a bug', () => {
    for (const code of ['EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']) {
      expect(answer(Object.assign(new Error(`connect ${code} 10.0.0.9:5432`), { code, syscall: 'connect' }))).toEqual({
        status: 503,
        body: { status: false, error: { code: 'service_unavailable', message: 'A backing store is unavailable; try again shortly', details: {} } },
      });
    }
  });
});
