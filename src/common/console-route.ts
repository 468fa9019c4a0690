import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse } from '@nestjs/swagger';
import { okEnvelope, ref, type Schema } from './openapi.js';

/**
 * The decorator of a `/console/api` route for the console's own OpenAPI document (openapi/console.json,
 * built by src/openapi.ts), and the schema helpers its answers are written with. The console's
 * schemas themselves are in src/console/console.openapi.ts.
 */

export const CONSOLE_TAGS = [
  { name: 'Session', description: 'Sign-up, sign-in, the session and its second factor, password and invitations.' },
  { name: 'Organization', description: "The signed-in user's organization: its keys, team and settings." },
  { name: 'Checks', description: 'Overview, scopes, verifications and the playground.' },
  { name: 'Wallet', description: 'Balance, transactions, top-ups and statements.' },
  { name: 'Webhooks', description: 'Webhook endpoints, deliveries and the low-balance alert.' },
  { name: 'Verification flows', description: 'Flows, their reusable links, sessions, and the review of a session in needs_review.' },
  { name: 'Data subjects', description: "Data subjects' requests and holds." },
  { name: 'Operator', description: "The operators' console: organizations, wallets, audit, projections and operators." },
] as const;

export type ConsoleTag = (typeof CONSOLE_TAGS)[number]['name'];

/** An object whose properties are all required but those named optional. */
export function object(properties: Record<string, Schema>, optional: readonly string[] = []): Schema {
  return { type: 'object', required: Object.keys(properties).filter((name) => !optional.includes(name)), properties };
}

export const list = (items: Schema): Schema => ({ type: 'array', items });
export const STRING: Schema = { type: 'string' };
export const NULLABLE_STRING: Schema = { type: ['string', 'null'] };
export const BOOLEAN: Schema = { type: 'boolean' };
export const INTEGER: Schema = { type: 'integer' };
/** A JSON value the console passes through without reading it field by field. */
export const ANY_OBJECT: Schema = { type: 'object' };

type Success =
  | { readonly status: number | readonly number[]; readonly data: Schema; readonly meta?: Schema }
  | { readonly status: 204 }
  | { readonly status: number; readonly file: 'text/csv' | 'application/pdf' | 'image/jpeg'; readonly json?: Schema };

/**
 * One console route: its operation id (the console's name for it), tag, summary, its success
 * answer, the error envelope for every 4XX and 5XX status (the console reads `error.code`), and
 * the JSON body it takes, if any.
 */
export function ConsoleRoute(
  operationId: string,
  tag: ConsoleTag,
  summary: string,
  success: Success,
  body?: { readonly schema: Schema; readonly required?: boolean },
): MethodDecorator {
  const answer =
    'data' in success
      ? applyDecorators(
          ...[success.status]
            .flat()
            .map((status) => ApiResponse({ status, description: 'Done', content: { 'application/json': { schema: okEnvelope(success.data, success.meta) } } })),
        )
      : 'file' in success
        ? ApiResponse({
            status: success.status,
            description: 'The file',
            content: {
              [success.file]: { schema: { type: 'string', ...(success.file === 'text/csv' ? {} : { format: 'binary' }) } },
              ...(success.json === undefined ? {} : { 'application/json': { schema: okEnvelope(success.json) } }),
            },
          })
        : ApiResponse({ status: 204, description: 'Done' });
  return applyDecorators(
    ApiOperation({ operationId, tags: [tag], summary }),
    ...(body === undefined ? [] : [ApiBody({ required: body.required ?? true, schema: body.schema })]),
    answer,
    ApiResponse({ status: '4XX', description: "The request's error, in the envelope", content: { 'application/json': { schema: ref('ConsoleError') } } }),
    ApiResponse({ status: '5XX', description: "The service's error, in the envelope", content: { 'application/json': { schema: ref('ConsoleError') } } }),
  );
}

/** A JSON body, required unless said otherwise. */
export const jsonBody = (schema: Schema, required = true) => ({ schema, required });

/** Answers of several routes that only say what was done. */
export const flag = (name: string, type: Schema = { const: true }): Schema => object({ [name]: type });
