import { Controller, Get, Header, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Clock } from '../common/clock.js';
import { Forbidden, NotFound } from '../common/errors.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiPathParam, ApiRoute } from '../common/openapi.js';
import { checkPortraitLink, PORTRAIT_ID } from './portrait-links.js';
import { PortraitStore } from './portrait.store.js';
import { Portraits } from './portraits.service.js';

/**
 * Serves a portrait to whoever holds a valid signed link (the link is the credential, so it works
 * in an `<img>` tag without the API key). The signature binds portrait and expiry, and is checked
 * before the store is read.
 */
@Controller('v1/portraits')
export class PortraitsController {
  constructor(
    @Inject(PortraitStore) private readonly store: PortraitStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(Portraits) private readonly portraits: Portraits,
  ) {}

  @Get(':id')
  @Header('cache-control', 'private, no-store')
  @ApiRoute(
    'getPortrait',
    'Portraits',
    'Download a portrait',
    'Through the signed, expiring link in a verification result (`portraitUrl`): the link is the credential, so it works in an `<img>` tag without the key, on any site (`Cross-Origin-Resource-Policy: cross-origin`). Answers carry `Cache-Control: private, no-store`.',
  )
  @ApiPathParam('id', { type: 'string', pattern: PORTRAIT_ID.source, example: 'prt_0123456789abcdef_1f_2a0' }, 'the portrait')
  @ApiQuery({ name: 'expires', required: true, description: 'Unix seconds after which the link stops working', schema: { type: 'string', pattern: '^\\d{1,12}$' } })
  @ApiQuery({ name: 'signature', required: true, description: 'HMAC-SHA256 over portrait and expiry (base64url)', schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } })
  @ApiResponse({
    status: 200,
    description: 'The image',
    content: {
      'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } as never },
      'image/jpeg': { schema: { type: 'string', contentMediaType: 'image/jpeg' } as never },
    },
  })
  @ApiErrors(ANY_ROUTE_ERRORS, 'portrait_link_expired', 'portrait_link_invalid', 'not_found')
  async download(@Param('id') id: string, @Query('expires') expires: unknown, @Query('signature') signature: unknown, @Res() reply: FastifyReply): Promise<void> {
    // Nothing is read before the link is known to be one this service signed.
    const check = checkPortraitLink(this.store.linkSecret, id, expires, signature, this.clock.now());
    if (check === 'expired') throw new Forbidden('portrait_link_expired', 'This portrait link has expired; read the verification again for a fresh one');
    if (check !== 'valid') throw new Forbidden('portrait_link_invalid', 'This portrait link is not valid');
    const portrait = await this.portraits.get(id);
    if (portrait === null) throw new NotFound('No such portrait');
    // Integrators show the portrait on their own pages, another site than the API's: the signed,
    // short-lived link is the credential, so the image may be loaded from any origin (the API's
    // same-origin policy would make every such <img> fail). Errors keep the API's policy.
    await reply
      .status(200)
      .header('content-type', portrait.contentType)
      .header('cache-control', 'private, no-store')
      .header('cross-origin-resource-policy', 'cross-origin')
      .send(portrait.bytes);
  }
}
