import { Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { SYSTEM_ACTOR } from '../common/event.js';
import { NotFound } from '../common/errors.js';
import type { RawBodyRequest } from '../common/input-limits.js';
import { API_SECURITY_HEADERS } from '../common/security-headers.js';
import { SANDBOX_CHECKOUT_PATH } from './sandbox.rail.js';
import { TOPUP_REFERENCE, TopUps, type WebhookOutcome } from './topups.service.js';

/** The checkout page may style itself and post its own two forms; nothing else. */
const CHECKOUT_HEADERS = {
  ...API_SECURITY_HEADERS,
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Where the payer lands after the rail's checkout: the console's wallet page, showing the top-up. */
export const walletPage = (reference: string) => `/console/wallet?topup=${encodeURIComponent(reference)}`;

/**
 * What payment providers and payers reach, outside the public API: the webhook receivers, the
 * return from the checkout (Paystack's callback URL) and the sandbox rail's checkout page.
 */
@ApiExcludeController()
@Controller('payments')
export class PaymentsController {
  constructor(@Inject(TopUps) private readonly topUps: TopUps) {}

  /** Paystack's webhook: 401 unless `x-paystack-signature` signs the raw body; 503 (Paystack retries) when its API does not confirm the payment now. */
  @Post('paystack/webhook')
  @HttpCode(200)
  async paystack(@Req() request: RawBodyRequest, @Headers('x-paystack-signature') signature: string | undefined): Promise<SuccessEnvelope<{ outcome: WebhookOutcome }>> {
    return ok({ outcome: await this.topUps.receiveWebhook('paystack', request.rawBody, signature) });
  }

  /** The payer's return (`?reference=`, as Paystack appends it): confirmed as a webhook would be, then on to the wallet page whatever came of it. */
  @Get('return')
  async back(@Query('reference') reference: unknown, @Res() reply: FastifyReply): Promise<void> {
    if (typeof reference !== 'string' || !TOPUP_REFERENCE.test(reference)) throw new NotFound('No top-up with this reference');
    await this.topUps.confirm(reference, null, { correlationId: `payment-return-${reference}`, actor: SYSTEM_ACTOR }).catch(() => undefined);
    void reply.status(303).header('location', walletPage(reference)).send();
  }

  @Get('sandbox/checkout/:reference')
  @RouteConfig({ securityHeaders: CHECKOUT_HEADERS })
  async checkout(@Param('reference') reference: string, @Res() reply: FastifyReply): Promise<void> {
    const transaction = TOPUP_REFERENCE.test(reference) ? await this.topUps.sandbox.transaction(reference) : undefined;
    if (transaction === undefined) throw new NotFound('No sandbox payment with this reference');
    const amount = `₦${(transaction.amountKobo / 100).toLocaleString('en-NG', { minimumFractionDigits: 2 })}`;
    const action = `${SANDBOX_CHECKOUT_PATH}/${escapeHtml(reference)}`;
    const open = transaction.status === 'ongoing';
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sandbox checkout</title>
<style>body{font-family:system-ui,sans-serif;max-width:26rem;margin:2rem auto;padding:0 1rem}button{font-size:1rem;padding:.7rem 1.2rem;margin:.3rem .5rem .3rem 0;border-radius:6px;border:1px solid #333;cursor:pointer}.pay{background:#0a7d32;color:#fff;border-color:#0a7d32}</style></head>
<body><main><h1>Sandbox checkout</h1><p>No real money moves: this stands in for Paystack's checkout.</p><p>Amount: <strong>${escapeHtml(amount)}</strong></p>
${open ? `<form method="post" action="${action}/pay"><button class="pay" type="submit">Pay ${escapeHtml(amount)}</button></form><form method="post" action="${action}/decline"><button type="submit">Decline</button></form>` : `<p>This payment is ${escapeHtml(transaction.status)}.</p><p><a href="${escapeHtml(walletPage(reference))}">Back to the wallet</a></p>`}
</main></body></html>`;
    void reply.status(200).header('content-type', 'text/html; charset=utf-8').send(html);
  }

  /** The payer's click: the sandbox settles the payment, sends its signed `charge.success` through the webhook receiver, and returns the payer as Paystack would. */
  @Post('sandbox/checkout/:reference/:outcome')
  async settle(@Param('reference') reference: string, @Param('outcome') outcome: string, @Res() reply: FastifyReply): Promise<void> {
    if (!TOPUP_REFERENCE.test(reference) || (outcome !== 'pay' && outcome !== 'decline')) throw new NotFound('No sandbox payment with this reference');
    const transaction = await this.topUps.sandbox.transaction(reference);
    if (transaction === undefined) throw new NotFound('No sandbox payment with this reference');
    const webhook = await this.topUps.sandbox.settle(reference, outcome);
    if (webhook !== undefined) await this.topUps.receiveWebhook('sandbox', webhook.rawBody, webhook.signature).catch(() => undefined);
    void reply
      .status(303)
      .header('location', `${transaction.callbackUrl}?trxref=${encodeURIComponent(reference)}&reference=${encodeURIComponent(reference)}`)
      .send();
  }
}
