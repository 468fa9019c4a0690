import type { Schema } from '../../src/common/openapi.js';

/** The OpenAPI schema of the projections status route. */

const POSITION: Schema = { type: 'string', pattern: '^\\d+$', description: 'a position in the event log (a string: 64 bits)' };

export function projectionStatusSchemas(): Record<string, Schema> {
  return {
    ProjectionStatus: {
      type: 'object',
      required: [
        'name',
        'state',
        'position',
        'headPosition',
        'newestPosition',
        'lagEvents',
        'lagEventsCapped',
        'lagSeconds',
        'eventsPerSecond',
        'eventsProcessed',
        'updatedAt',
        'worker',
        'error',
        'rebuild',
        'logHeldBack',
      ],
      properties: {
        name: { type: 'string', example: 'verifications' },
        state: { type: 'string', enum: ['running', 'catching_up', 'held_back', 'rebuilding', 'stopped', 'idle'] },
        position: { ...POSITION, description: 'the checkpoint: the last position applied' },
        headPosition: { ...POSITION, description: 'the newest event visible to subscribers (on PostgreSQL, below the visible bound)' },
        newestPosition: { ...POSITION, description: 'the newest event written: on PostgreSQL, above headPosition while the log is held back; lag is measured against it' },
        lagEvents: { type: ['integer', 'null'], minimum: 0, description: "this projection's events after its checkpoint; null when the store cannot count them" },
        lagEventsCapped: { type: 'boolean', description: 'lagEvents hit its bound (1,000,000): the real lag is at least that' },
        lagSeconds: { type: 'number', minimum: 0, description: 'age of the oldest event not applied yet; 0 when caught up' },
        eventsPerSecond: { type: ['number', 'null'], description: "over the active worker's sliding window; null when no worker holds the projection" },
        eventsProcessed: { type: 'integer', minimum: 0 },
        updatedAt: { type: ['string', 'null'], format: 'date-time' },
        worker: {
          type: ['object', 'null'],
          required: ['pid', 'backendPid'],
          properties: { pid: { type: ['integer', 'null'] }, backendPid: { type: 'integer' } },
          description: 'the process running it: its OS pid, and the PostgreSQL backend holding the lock',
        },
        error: { type: ['object', 'null'], required: ['message', 'failedPosition'], properties: { message: { type: 'string' }, failedPosition: { type: ['string', 'null'] } } },
        rebuild: {
          type: ['object', 'null'],
          required: ['position', 'lagEvents', 'active'],
          properties: { position: POSITION, lagEvents: { type: ['integer', 'null'] }, active: { type: 'boolean' } },
        },
        logHeldBack: {
          type: ['object', 'null'],
          description: 'PostgreSQL only: committed events wait behind the visible bound, held by the oldest open transaction in the cluster; null when nothing is held back',
          required: ['seconds', 'events', 'visibleBound', 'holder', 'description'],
          properties: {
            seconds: { type: 'number', minimum: 0 },
            events: { type: 'integer', minimum: 0 },
            visibleBound: POSITION,
            holder: {
              type: ['object', 'null'],
              description: 'the backend (pid, database, application, state, transaction age) or prepared transaction holding the bound',
              additionalProperties: true,
            },
            description: { type: 'string' },
          },
        },
      },
    },
  };
}
