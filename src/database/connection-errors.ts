const CONNECTION_ERROR_CODES = new Set([
  // Node's socket errors, a route to the server's host or network gone (a failover, a VPN dropped)
  // and a connection the local stack aborted included: each passes, so the caller may try again.
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  // PostgreSQL: admin / crash / cannot-connect-now shutdowns, and the connection exception class.
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/**
 * A failure to reach PostgreSQL (as opposed to a bad query): the request gets 503 and the caller
 * may try again. One definition for the event store adapter and the HTTP error filter.
 */
export function isConnectionError(error: unknown): boolean {
  const { code = '', syscall = '' } = (error as { code?: string; syscall?: string } | null) ?? {};
  const message = error instanceof Error ? error.message : '';
  // Through a Unix socket (the embedded cluster), a stopped server is a socket file that is gone.
  const socketGone = code === 'ENOENT' && syscall === 'connect';
  return CONNECTION_ERROR_CODES.has(code) || socketGone || /Connection terminated|timeout exceeded when trying to connect|connection error/i.test(message);
}

/**
 * pg.Pool listens for errors on idle clients only: a client checked out between two queries
 * (inside a transaction, a projection batch) that loses its server emits 'error' with no listener,
 * which kills the process. Every client of `pool` gets a listener for its whole life instead; the
 * query in flight still fails with the connection error (503), and the pool drops the dead client
 * when it is released.
 */
export function keepPoolClientErrorsHandled(pool: { on(event: 'connect', listener: (client: { on(event: 'error', listener: () => void): unknown }) => void): unknown }): void {
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
}
