import { Body, Controller, Get, Inject, Put, Req, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { AdminGuard, operatorActor, type AdminRequest } from '../common/admin.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { ADMIN_ERRORS, ADMIN_WRITE_ERRORS, ANY_ROUTE_ERRORS, ApiErrors, ApiJsonBody, ApiRoute, ApiSuccess, BODY_ERRORS, ref } from '../common/openapi.js';
import { commandContext } from '../common/request-context.js';
import { paystackKeyOf, type PaystackKeyView } from './paystack-key.js';
import { TopUps } from './topups.service.js';

/** Operators set the deployment's Paystack secret key: sealed in the log, never shown again. */
@ApiBearerAuth('adminToken')
@Controller('admin/v1/payment_rails/paystack')
@UseGuards(AdminGuard)
export class PaystackKeyController {
  constructor(@Inject(TopUps) private readonly topUps: TopUps) {}

  @Get()
  @ApiRoute(
    'getPaystackKey',
    'Admin: wallets',
    'Get the Paystack key in force',
    'Whether live top-ups have a key, where it comes from and its last four characters; never the key. Admin and auditor tokens.',
  )
  @ApiSuccess(200, 'The key in force', ref('PaystackKey'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async get(): Promise<SuccessEnvelope<PaystackKeyView>> {
    return ok(await this.topUps.paystackKey.view());
  }

  @Put()
  @ApiRoute(
    'setPaystackKey',
    'Admin: wallets',
    'Set the Paystack secret key',
    "Sealed under the provider credentials' key and recorded as an event; every instance uses it within 5 seconds (at once for a webhook signed under it). It replaces PAYSTACK_SECRET_KEY. Rotate it in Paystack's dashboard, then set the new one here.",
  )
  @ApiJsonBody(ref('SetPaystackKey'), { key: { summary: 'A live key', value: { secretKey: 'sk_live_0123456789abcdef0123456789abcdef01234567' } } })
  @ApiSuccess(200, 'The key now in force', ref('PaystackKey'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS)
  async set(@Req() request: AdminRequest, @Body() body: unknown): Promise<SuccessEnvelope<PaystackKeyView>> {
    return ok(await this.topUps.paystackKey.set(paystackKeyOf(body), commandContext(request, operatorActor(request))));
  }
}
