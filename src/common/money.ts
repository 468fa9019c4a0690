/** 123456 kobo → "1234.56"; exact for every safe integer (no floating point on the way). */
export function naira(kobo: number): string {
  const sign = kobo < 0 ? '-' : '';
  const abs = Math.abs(kobo);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** 123456789 kobo → "1,234,567.89": naira with thousands separators, for people rather than spreadsheets. */
export function groupedNaira(kobo: number): string {
  const [whole, fraction] = naira(kobo).split('.');
  return `${whole.replace(/\B(?=(\d{3})+$)/g, ',')}.${fraction}`;
}
