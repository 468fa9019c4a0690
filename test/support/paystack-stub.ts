import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

interface Transaction {
  id: number;
  reference: string;
  amount: number;
  /** `abandoned` until the payer pays: what Paystack's verify answers for a transaction initialized and not (yet) paid. */
  status: 'success' | 'failed' | 'abandoned';
  fees: number;
  currency: string;
  paidAt: string | null;
}

/**
 * A stand-in for Paystack's API on loopback, speaking its documented shapes: `POST
 * /transaction/initialize` (Bearer secret key; amount in kobo, our reference, callback_url) and `GET
 * /transaction/verify/:reference`; an unknown reference is 400 `{status: false}`. It signs its
 * webhooks as Paystack does: `x-paystack-signature`, hex HMAC-SHA512 of the raw body under the
 * secret key. `down(n)` answers the next n verifications 503. As Paystack does, verify answers
 * `abandoned` for a transaction initialized and not paid yet: the payer may still pay it.
 */
export class PaystackStub {
  readonly transactions = new Map<string, Transaction>();
  readonly requests: { method: string; path: string; authorization: string | undefined; body: string }[] = [];
  private failVerifies = 0;
  private hangRequests = 0;
  /** When set, `POST /dedicated_account` accepts the request and the account comes later, by `assignmentWebhook`. */
  assignLater = false;
  private nextId = 4_099_260_000;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    /** The key it takes and signs with; a test rotates it as an operator would in Paystack's dashboard. */
    public secretKey: string,
  ) {}

  static async start(secretKey: string): Promise<PaystackStub> {
    let stub: PaystackStub | undefined;
    const server = createServer((request, response) => void stub?.handle(request, response));
    stub = new PaystackStub(server, secretKey);
    server.on('connection', (socket) => {
      stub?.sockets.add(socket);
      socket.on('close', () => stub?.sockets.delete(socket));
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    return stub;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  down(verifies: number): void {
    this.failVerifies = verifies;
  }

  /** The next n requests get no answer (the connection stays open until `close`). */
  hang(requests: number): void {
    this.hangRequests = requests;
  }

  /** A transfer of `amount` kobo arrived on a dedicated account: a paid transaction under Paystack's own reference. */
  transfer(reference: string, amount: number): Transaction {
    this.transactions.set(reference, { id: this.nextId++, reference, amount, status: 'abandoned', fees: 0, currency: 'NGN', paidAt: null });
    return this.pay(reference);
  }

  /** The payer paid: the transaction succeeds with Paystack's local card fee. */
  pay(reference: string, amount?: number): Transaction {
    const transaction = this.transactions.get(reference);
    if (transaction === undefined) throw new Error(`no stub transaction ${reference}`);
    Object.assign(transaction, { status: 'success', amount: amount ?? transaction.amount, paidAt: new Date().toISOString() });
    transaction.fees = Math.min(Math.round(transaction.amount * 0.015), 200_000);
    return transaction;
  }

  /** A `charge.success` webhook for the transaction as Paystack would send it, with `over` merged into its data. */
  webhook(reference: string, over: Record<string, unknown> = {}): { rawBody: string; signature: string } {
    const t = this.transactions.get(reference);
    const data = {
      id: t?.id ?? 1,
      domain: 'test',
      status: 'success',
      reference,
      amount: t?.amount ?? 100_000,
      fees: t?.fees ?? 0,
      currency: 'NGN',
      channel: 'card',
      paid_at: t?.paidAt,
      customer: { customer_code: 'CUS_stub' },
      ...over,
    };
    const rawBody = JSON.stringify({ event: 'charge.success', data });
    return { rawBody, signature: this.sign(rawBody) };
  }

  /**
   * Paystack's `dedicatedaccount.assign.success` (the customer and the dedicated account resource,
   * `identification.status` success) or `dedicatedaccount.assign.failed` (`dedicated_account` null).
   */
  assignmentWebhook(customerCode: string, outcome: 'success' | 'failed'): { rawBody: string; signature: string; accountNumber: string } {
    const accountNumber = `99${String(this.nextId++).slice(-8)}`;
    const customer = {
      id: 100_110,
      first_name: 'Ada',
      last_name: 'Obi',
      email: 'finance@example.test',
      customer_code: customerCode,
      phone: '+2348100000000',
      metadata: {},
      risk_action: 'default',
      international_format_phone: '+2348100000000',
    };
    const dedicatedAccount = {
      bank: { name: 'Wema Bank', id: 20, slug: 'wema-bank' },
      account_name: 'KORAPAY / IVL',
      account_number: accountNumber,
      assigned: true,
      currency: 'NGN',
      metadata: null,
      active: true,
      id: 987_654,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      assignment: {
        integration: 100_123,
        assignee_id: 100_110,
        assignee_type: 'Customer',
        expired: false,
        account_type: 'PAY-WITH-TRANSFER-RECURRING',
        assigned_at: new Date().toISOString(),
      },
    };
    const rawBody = JSON.stringify({
      event: `dedicatedaccount.assign.${outcome}`,
      data: { customer, dedicated_account: outcome === 'success' ? dedicatedAccount : null, identification: { status: outcome } },
    });
    return { rawBody, signature: this.sign(rawBody), accountNumber };
  }

  sign(rawBody: string): string {
    return createHmac('sha512', this.secretKey).update(rawBody).digest('hex');
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private reply(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', this.baseUrl);
    this.requests.push({ method: request.method ?? '', path: url.pathname, authorization: request.headers.authorization, body });
    if (this.hangRequests > 0) {
      this.hangRequests--;
      return;
    }
    if (request.headers.authorization !== `Bearer ${this.secretKey}`) return this.reply(response, 401, { status: false, message: 'Invalid key' });
    if (request.method === 'POST' && url.pathname === '/transaction/initialize') {
      const input = JSON.parse(body) as { amount: number; reference: string; email: string; callback_url: string; currency: string };
      if (this.transactions.has(input.reference)) return this.reply(response, 400, { status: false, message: 'Duplicate Transaction Reference' });
      this.transactions.set(input.reference, {
        id: this.nextId++,
        reference: input.reference,
        amount: Number(input.amount),
        status: 'abandoned',
        fees: 0,
        currency: input.currency,
        paidAt: null,
      });
      return this.reply(response, 200, {
        status: true,
        message: 'Authorization URL created',
        data: { authorization_url: `https://checkout.paystack.com/${input.reference}`, access_code: `ac_${input.reference}`, reference: input.reference },
      });
    }
    if (request.method === 'POST' && url.pathname === '/customer') {
      const input = JSON.parse(body) as { email: string };
      return this.reply(response, 200, { status: true, message: 'Customer created', data: { email: input.email, customer_code: `CUS_${this.nextId++}`, id: this.nextId } });
    }
    if (request.method === 'POST' && url.pathname === '/dedicated_account') {
      const input = JSON.parse(body) as { customer: string; preferred_bank: string };
      if (this.assignLater) return this.reply(response, 200, { status: true, message: 'Assign dedicated account in progress' });
      return this.reply(response, 200, {
        status: true,
        message: 'NUBAN successfully created',
        data: {
          bank: { name: 'Wema Bank', id: 20, slug: input.preferred_bank },
          account_name: 'KORAPAY / IVL',
          account_number: `99${String(this.nextId++).slice(-8)}`,
          assigned: true,
          currency: 'NGN',
          active: true,
          customer: { customer_code: input.customer },
        },
      });
    }
    const verify = /^\/transaction\/verify\/([^/]+)$/.exec(url.pathname);
    if (request.method === 'GET' && verify !== null) {
      if (this.failVerifies > 0) {
        this.failVerifies--;
        return this.reply(response, 503, { status: false, message: 'Service unavailable' });
      }
      const t = this.transactions.get(decodeURIComponent(verify[1]));
      if (t === undefined) return this.reply(response, 400, { status: false, message: 'Transaction reference not found' });
      return this.reply(response, 200, {
        status: true,
        message: 'Verification successful',
        data: {
          id: t.id,
          domain: 'test',
          status: t.status,
          reference: t.reference,
          amount: t.amount,
          gateway_response: 'Successful',
          paid_at: t.paidAt,
          channel: 'card',
          currency: t.currency,
          fees: t.fees,
          customer: { email: 'payer@example.test' },
        },
      });
    }
    return this.reply(response, 404, { status: false, message: 'Not found' });
  }
}
