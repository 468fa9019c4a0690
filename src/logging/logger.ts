import { pino, type DestinationStream, type Logger } from 'pino';
import type { AppConfig } from '../config/config.js';
import { requestLogFields } from './request-log.js';

/**
 * Always redacted, whatever LOG_REDACT_PATHS adds: the credentials a request carries in its
 * headers. The request log shows an allow list of headers that holds none of them
 * (LOGGED_REQUEST_HEADERS, request-log.ts); this is the second line, for any other line that would
 * carry a request's headers. Bodies are never logged at all (no serializer reads them), so identity
 * numbers, names, dates of birth and images cannot reach a log line through a request or a response.
 */
export const DEFAULT_REDACT_PATHS: readonly string[] = [
  'req.headers["x-service-key"]',
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

/** Written in place of a redacted value. */
export const REDACTED = '[redacted]';

/**
 * Errors keep their type, message, code and stack, not their other own properties: a pg error's
 * `detail` and `where` quote the values of the row that failed.
 */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error, message: 'non-error thrown' };
  const code = (error as { code?: unknown }).code;
  return { type: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}), stack: error.stack };
}

/**
 * The process's one pino logger: JSON lines, ISO timestamps, redaction. The API, the projection
 * workers and the CLIs all derive from it (the CLIs write it to stderr, keeping stdout for their
 * output).
 */
export function createLogger(config: AppConfig, destination?: DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: config.serviceName, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...DEFAULT_REDACT_PATHS, ...config.operations.logRedactPaths], censor: REDACTED },
      serializers: { err: serializeError, error: serializeError },
      formatters: { level: (label) => ({ level: label }) },
      // A line written while a request is handled names it (request-log.ts); outside requests, nothing is added.
      mixin: () => requestLogFields() ?? {},
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * Writes what the asynchronous destination still holds, before the process exits. (pino also
 * flushes its own destinations synchronously on 'exit'; this covers any other stream.)
 */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolveFlush) => {
    try {
      logger.flush(() => resolveFlush());
    } catch {
      // A destination that is already closed has nothing left to flush.
      resolveFlush();
    }
  });
}

/** The projection runner's small log interface over pino, for code that takes `{log, warn, error}`. */
export function messageLog(logger: Logger): { log(message: string): void; warn(message: string): void; error(message: string): void } {
  return {
    log: (message) => logger.info(message),
    warn: (message) => logger.warn(message),
    error: (message) => logger.error(message),
  };
}
