import type { Projection } from './projection.js';

/**
 * Every projection, by name. Features register theirs here (one import and one entry each).
 */
export const PROJECTIONS: readonly Projection[] = [];

export function projectionByName(name: string): Projection | undefined {
  return PROJECTIONS.find((projection) => projection.name === name);
}
