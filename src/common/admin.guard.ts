import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { RUNTIME, type Runtime } from '../config/runtime.js';
import { Forbidden, NotFound, Unauthenticated } from './errors.js';
import type { Actor } from './event.js';

export type AdminRole = 'admin' | 'auditor';

export interface AdminRequest extends FastifyRequest {
  adminRole?: AdminRole;
}

function sameSecret(given: string, expected: string): boolean {
  // Hashing first makes the comparison constant-time whatever the lengths.
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * Guards /admin/v1: `Authorization: Bearer <token>`. The admin token has full access; the auditor
 * token reads everything and changes nothing (403 on writes). With no admin token configured the
 * admin API does not exist (404), so it is never open by accident.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(@Inject(RUNTIME) private readonly runtime: Runtime) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const adminToken = this.runtime.adminToken;
    if (adminToken === undefined) throw new NotFound('Not found');
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (match === null) throw new Unauthenticated('An admin bearer token is required');
    const token = match[1];
    if (sameSecret(token, adminToken)) {
      request.adminRole = 'admin';
      return true;
    }
    const auditorToken = this.runtime.config.admin.auditorToken;
    if (auditorToken !== undefined && sameSecret(token, auditorToken)) {
      if (!READ_METHODS.has(request.method)) throw new Forbidden('read_only', 'The auditor token cannot change anything');
      request.adminRole = 'auditor';
      return true;
    }
    throw new Unauthenticated('The admin bearer token is not valid');
  }
}

export function operatorActor(request: AdminRequest): Actor {
  return { type: 'operator', id: request.adminRole ?? 'admin' };
}
