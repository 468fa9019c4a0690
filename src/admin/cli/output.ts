import { AppError, ValidationFailed } from '../../common/errors.js';
import { ConfigError } from '../../config/config.js';

/** The human form of an answer: `name: value` lines, nested objects indented. */
export function human(value: unknown, indent = ''): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return `${indent}(none)`;
    if (value.every((item) => typeof item !== 'object' || item === null)) return `${indent}${value.join(', ')}`;
    return value.map((item) => human(item, indent)).join('\n\n');
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value)
      .map(([name, field]) => {
        if (Array.isArray(field)) return `${indent}${name}: ${field.length === 0 ? '(none)' : field.every((item) => typeof item !== 'object') ? field.join(', ') : `\n${human(field, `${indent}  `)}`}`;
        if (typeof field === 'object' && field !== null) return Object.keys(field).length === 0 ? `${indent}${name}: (none)` : `${indent}${name}:\n${human(field, `${indent}  `)}`;
        return `${indent}${name}: ${field === null ? '-' : String(field)}`;
      })
      .join('\n');
  }
  return `${indent}${String(value)}`;
}

/** Reports the error on stderr and answers the exit code. */
export function fail(error: unknown): number {
  if (error instanceof AppError) {
    process.stderr.write(`error: ${error.code}: ${error.message}\n`);
    if (error instanceof ValidationFailed) for (const field of error.fields) process.stderr.write(`  ${field.field}: ${field.message}\n`);
    return 1;
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`error: config: ${error.message}\n`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`error: failed: ${message}\n`);
  return 1;
}
