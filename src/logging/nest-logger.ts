import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** Nest's own exception handlers call `error(message, stack, context)`: a stack as the first extra argument. */
function looksLikeStack(value: unknown): value is string {
  return typeof value === 'string' && /\n\s+at /.test(value);
}

/**
 * Nest's start-up chatter: a line per module loaded and per route mapped (about fifty), useful when
 * wiring is in doubt, noise otherwise. Logged at debug rather than info.
 */
const START_UP_CONTEXTS: ReadonlySet<string> = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/**
 * Nest's `Logger` (framework lines and `new Logger('Context')` in the code) over the process's pino
 * logger. The context is the last extra argument, as Nest passes it; the request's fields come
 * from the logger's mixin (request-log.ts).
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  verbose(message: unknown, ...extra: unknown[]): void {
    this.write('trace', message, extra);
  }

  debug(message: unknown, ...extra: unknown[]): void {
    this.write('debug', message, extra);
  }

  log(message: unknown, ...extra: unknown[]): void {
    const context = extra.at(-1);
    this.write(typeof context === 'string' && START_UP_CONTEXTS.has(context) ? 'debug' : 'info', message, extra);
  }

  warn(message: unknown, ...extra: unknown[]): void {
    this.write('warn', message, extra);
  }

  error(message: unknown, ...extra: unknown[]): void {
    this.write('error', message, extra);
  }

  fatal(message: unknown, ...extra: unknown[]): void {
    this.write('fatal', message, extra);
  }

  private write(level: Level, message: unknown, extra: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const context = extra.at(-1);
    if (typeof context === 'string' && !looksLikeStack(context)) fields.context = context;
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ ...fields, ...message });
    } else if (looksLikeStack(extra[0])) {
      const err = new Error(String(message));
      err.stack = extra[0];
      this.logger[level]({ ...fields, err }, String(message));
    } else {
      this.logger[level](fields, String(message));
    }
  }
}
