import { describe, expect, it } from '@jest/globals';
import { isConnectionError } from './connection-errors.js';

const nodeError = (code: string, syscall: string, message: string) => Object.assign(new Error(message), { code, syscall });

describe('isConnectionError', () => {
  it('knows a server that cannot be reached, over TCP or through a Unix socket whose file is gone', () => {
    expect(isConnectionError(nodeError('ECONNREFUSED', 'connect', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe(true);
    expect(isConnectionError(nodeError('ENOENT', 'connect', 'connect ENOENT /data/run/.s.PGSQL.54329'))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('knows a host or network with no route, and a connection the local stack aborted (503, not 500)', () => {
    expect(isConnectionError(nodeError('EHOSTUNREACH', 'connect', 'connect EHOSTUNREACH 10.0.0.9:5432'))).toBe(true);
    expect(isConnectionError(nodeError('ENETUNREACH', 'connect', 'connect ENETUNREACH 2001:db8::1:5432'))).toBe(true);
    expect(isConnectionError(nodeError('ECONNABORTED', 'read', 'read ECONNABORTED'))).toBe(true);
  });

  it('leaves other failures alone: a missing file is not an unreachable database, nor is a bad query', () => {
    expect(isConnectionError(nodeError('ENOENT', 'open', "ENOENT: no such file or directory, open 'portrait'"))).toBe(false);
    expect(isConnectionError(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});
