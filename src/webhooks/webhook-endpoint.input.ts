import { ValidationFailed, type FieldError } from '../common/errors.js';
import { isPlainObject } from '../common/validation.js';
import { targetUrlProblem } from './safe-post.js';

const MAX_DESCRIPTION = 500;
const MAX_EVENT_TYPES = 50;

export interface EndpointInput {
  readonly url?: string;
  readonly eventTypes?: readonly string[];
  readonly description?: string | null;
  readonly enabled?: boolean;
}

/**
 * An endpoint's body, for a creation (`url` required) or a change (every field optional). Unknown
 * fields are refused; field errors name fields, never echo values.
 */
export function parseEndpointInput(body: unknown, mode: 'create' | 'update', policy: { allowPrivateTargets: boolean }, allowed: readonly string[] = []): EndpointInput {
  const input = body === undefined || body === null ? {} : body;
  if (!isPlainObject(input)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object' }]);
  const errors: FieldError[] = [];
  for (const field of Object.keys(input).slice(0, 20)) {
    if (!['url', 'eventTypes', 'description', 'enabled', ...allowed].includes(field)) errors.push({ field: field.slice(0, 50), message: 'is not a field of a webhook endpoint' });
  }
  const { url, eventTypes, description, enabled } = input;
  if (url === undefined) {
    if (mode === 'create') errors.push({ field: 'url', message: 'is required' });
  } else if (typeof url !== 'string') errors.push({ field: 'url', message: 'must be a string' });
  else {
    const problem = targetUrlProblem(url, policy);
    if (problem !== null) errors.push({ field: 'url', message: problem });
  }
  if (eventTypes !== undefined && (!Array.isArray(eventTypes) || eventTypes.length > MAX_EVENT_TYPES || eventTypes.some((type) => typeof type !== 'string'))) {
    errors.push({ field: 'eventTypes', message: `must be an array of at most ${MAX_EVENT_TYPES} event types (empty: every type)` });
  }
  if (description !== undefined && description !== null && (typeof description !== 'string' || description.length > MAX_DESCRIPTION)) {
    errors.push({ field: 'description', message: `must be a string of at most ${MAX_DESCRIPTION} characters, or null` });
  }
  if (enabled !== undefined && typeof enabled !== 'boolean') errors.push({ field: 'enabled', message: 'must be true or false' });
  if (errors.length > 0) throw new ValidationFailed(errors);
  return {
    ...(url === undefined ? {} : { url: url as string }),
    ...(eventTypes === undefined ? {} : { eventTypes: eventTypes as string[] }),
    ...(description === undefined ? {} : { description: description as string | null }),
    ...(enabled === undefined ? {} : { enabled: enabled as boolean }),
  };
}
