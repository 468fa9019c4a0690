const CONNECTION_ERROR_CODES = new Set([
  // Node's socket errors.
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND',
  // PostgreSQL: admin / crash / cannot-connect-now shutdowns, and the connection exception class.
  '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006',
]);

/**
 * A failure to reach PostgreSQL (as opposed to a bad query): the request gets 503 and the caller
 * may try again. One definition for the event store adapter and the HTTP error filter.
 */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code ?? '';
  const message = error instanceof Error ? error.message : '';
  return CONNECTION_ERROR_CODES.has(code) || /Connection terminated|timeout exceeded when trying to connect|connection error/i.test(message);
}
