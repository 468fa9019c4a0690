import { Controller, Get, Header, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Clock } from '../common/clock.js';
import { Forbidden, NotFound } from '../common/errors.js';
import { checkPortraitLink } from './portrait-links.js';
import { PortraitStore } from './portrait.store.js';
import { Portraits } from './portraits.service.js';

/**
 * Serves a portrait to whoever holds a valid signed link (the link is the credential, so it works
 * in an `<img>` tag without the API key). The signature binds portrait and expiry, and is checked
 * before the store is read.
 */
@ApiTags('portraits')
@Controller('v1/portraits')
export class PortraitsController {
  constructor(
    @Inject(PortraitStore) private readonly store: PortraitStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(Portraits) private readonly portraits: Portraits,
  ) {}

  @Get(':id')
  @Header('cache-control', 'private, no-store')
  @ApiOperation({ summary: 'Download a portrait through the signed, expiring link found in a verification result (portraitUrl)' })
  @ApiParam({ name: 'id', example: 'prt_0123456789abcdef0123456789abcdef' })
  @ApiQuery({ name: 'expires', description: 'Unix seconds after which the link stops working' })
  @ApiQuery({ name: 'signature', description: 'HMAC-SHA256 over portrait and expiry' })
  @ApiProduces('image/png', 'image/jpeg')
  @ApiResponse({ status: 200, description: 'The image bytes' })
  @ApiResponse({ status: 403, description: 'portrait_link_expired or portrait_link_invalid' })
  @ApiResponse({ status: 404, description: "No such portrait, or its verification's personal data was erased" })
  async download(@Param('id') id: string, @Query('expires') expires: unknown, @Query('signature') signature: unknown, @Res() reply: FastifyReply): Promise<void> {
    // Nothing is read before the link is known to be one this service signed.
    const check = checkPortraitLink(this.store.linkSecret, id, expires, signature, this.clock.now());
    if (check === 'expired') throw new Forbidden('portrait_link_expired', 'This portrait link has expired; read the verification again for a fresh one');
    if (check !== 'valid') throw new Forbidden('portrait_link_invalid', 'This portrait link is not valid');
    const portrait = await this.portraits.get(id);
    if (portrait === null) throw new NotFound('No such portrait');
    await reply.status(200).header('content-type', portrait.contentType).header('cache-control', 'private, no-store').send(portrait.bytes);
  }
}
