import type { FastifyReply } from 'fastify';
import PDFDocument from 'pdfkit';
import type pg from 'pg';
import { NotFound } from '../common/errors.js';
import { readTopUpReceipt } from './topup.read-model.js';

/** Kobo as `NGN 1,234.56` (the PDF's standard fonts have no naira sign). */
export function ngn(kobo: number): string {
  const sign = kobo < 0 ? '-' : '';
  const whole = Math.abs(kobo);
  return `${sign}NGN ${Math.floor(whole / 100).toLocaleString('en-US')}.${String(whole % 100).padStart(2, '0')}`;
}

/** A PDF rendered by pdfkit to one buffer; uncompressed, so its text stays searchable. */
export function renderPdf(title: string, draw: (doc: PDFKit.PDFDocument) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: 'A4',
      margin: 50,
      compress: false,
      info: { Title: title, Producer: 'identity-verification-service', Creator: 'identity-verification-service' },
    });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    draw(doc);
    doc.end();
  });
}

/** Label and value rows, one per line. */
export function rows(doc: PDFKit.PDFDocument, lines: readonly (readonly [string, string])[]): void {
  for (const [label, value] of lines) {
    const y = doc.y;
    doc.font('Helvetica').fontSize(10).text(label, 50, y, { width: 220 });
    doc.font('Helvetica-Bold').text(value, 280, y, { width: 265 });
    doc.moveDown(0.4);
  }
}

export interface ReceiptFacts {
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: string;
  readonly rail: string;
  readonly creditedKobo: number;
  readonly feesKobo: number;
  readonly paidAt: string;
  readonly providerTransactionId: string;
}

/** The receipt of one credited top-up: ids and amounts only, no payer's detail. */
export function receiptPdf(facts: ReceiptFacts): Promise<Buffer> {
  return renderPdf(`Receipt ${facts.reference}`, (doc) => {
    doc.font('Helvetica-Bold').fontSize(18).text('Wallet top-up receipt');
    doc.moveDown();
    rows(doc, [
      ['Top-up reference', facts.reference],
      ['Organization', facts.organizationId],
      ['Wallet', facts.environment],
      ['Paid through', facts.rail === 'sandbox' ? 'sandbox (no real money)' : 'Paystack'],
      ["Provider's transaction", facts.providerTransactionId],
      ['Paid at', facts.paidAt],
      ['Credited to the wallet', ngn(facts.creditedKobo)],
      ["Provider's fees (not taken from the credit)", ngn(facts.feesKobo)],
    ]);
  });
}

/** A top-up reference: ours (`top_…`) or the one a rail gave a transfer to a dedicated account; anything else names no receipt. */
const RECEIPT_REFERENCE = /^(top_[0-9A-HJKMNP-TV-Z]{26}|[A-Za-z0-9][A-Za-z0-9._=-]{0,99})$/;

/** The receipt of the organization's credited top-up by its reference; NotFound for any other (unknown, another organization's, not credited). */
export async function topUpReceipt(pool: pg.Pool, organizationId: string, reference: string): Promise<Buffer> {
  const row = RECEIPT_REFERENCE.test(reference) ? await readTopUpReceipt(pool, reference) : undefined;
  if (row === undefined || row.organizationId !== organizationId || row.status !== 'credited') throw new NotFound('No credited top-up with this reference');
  return receiptPdf({
    reference,
    organizationId: row.organizationId,
    environment: row.environment,
    rail: row.rail,
    creditedKobo: row.creditedKobo ?? 0,
    feesKobo: row.feesKobo ?? 0,
    paidAt: row.paidAt ?? '',
    providerTransactionId: row.providerTransactionId ?? '',
  });
}

/** Sends a receipt as a PDF download. */
export function sendReceipt(reply: FastifyReply, reference: string, pdf: Buffer): void {
  void reply.status(200).header('content-type', 'application/pdf').header('content-disposition', `attachment; filename="receipt-${reference}.pdf"`).send(pdf);
}
