import PDFDocument from 'pdfkit';

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
