/**
 * The banks of Nigeria as the bank-account checks name them: a code, a name, and the other ways
 * callers write them. Shared by the sandbox provider (which resolves the bank a check asked for) and
 * the blind index (which tells one account number at two banks apart).
 */

/** Banks: code, name, and the other ways callers write them (compared once normalised, see `bankKey`). */
const BANKS: readonly { code: string; name: string; aliases: readonly string[] }[] = [
  { code: '044', name: 'Access Bank', aliases: ['access', 'accessbank', 'diamond'] },
  { code: '023', name: 'Citibank Nigeria', aliases: ['citi', 'citibank'] },
  { code: '050', name: 'Ecobank Nigeria', aliases: ['eco', 'ecobank'] },
  { code: '070', name: 'Fidelity Bank', aliases: ['fidelity', 'fidelitybank'] },
  { code: '011', name: 'First Bank of Nigeria', aliases: ['first', 'firstbank', 'fbn'] },
  { code: '214', name: 'First City Monument Bank', aliases: ['fcmb', 'firstcitymonument'] },
  { code: '058', name: 'Guaranty Trust Bank', aliases: ['gt', 'gtb', 'gtbank', 'gtco', 'guarantytrust', 'guarantytrustbank'] },
  { code: '301', name: 'Jaiz Bank', aliases: ['jaiz'] },
  { code: '082', name: 'Keystone Bank', aliases: ['keystone'] },
  { code: '50211', name: 'Kuda Microfinance Bank', aliases: ['kuda', 'kudamicrofinance', 'kudamfb'] },
  { code: '50515', name: 'Moniepoint Microfinance Bank', aliases: ['moniepoint', 'moniepointmicrofinance', 'moniepointmfb'] },
  { code: '999992', name: 'OPay', aliases: ['opay', 'paycom'] },
  { code: '999991', name: 'PalmPay', aliases: ['palmpay'] },
  { code: '076', name: 'Polaris Bank', aliases: ['polaris', 'skye'] },
  { code: '101', name: 'Providus Bank', aliases: ['providus'] },
  { code: '221', name: 'Stanbic IBTC Bank', aliases: ['stanbic', 'stanbicibtc', 'ibtc'] },
  { code: '068', name: 'Standard Chartered Bank', aliases: ['standardchartered', 'scb'] },
  { code: '232', name: 'Sterling Bank', aliases: ['sterling'] },
  { code: '032', name: 'Union Bank of Nigeria', aliases: ['union', 'unionbank', 'ubn'] },
  { code: '033', name: 'United Bank for Africa', aliases: ['uba', 'unitedbankforafrica', 'unitedforafrica'] },
  { code: '215', name: 'Unity Bank', aliases: ['unity'] },
  { code: '035', name: 'Wema Bank', aliases: ['wema', 'alat'] },
  { code: '057', name: 'Zenith Bank', aliases: ['zenith', 'zenithbank'] },
];

/** Words that do not tell one bank from another ("GT Bank Plc" is "GT"). */
const FILLER = new Set(['bank', 'plc', 'ltd', 'limited', 'of', 'the', 'nigeria', 'nig', 'ng', 'mfb', 'microfinance', 'company']);

function bankKey(value: string): string {
  return value
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '' && !FILLER.has(word))
    .join('');
}

const BANKS_BY_KEY = new Map<string, { code: string; name: string }>();
for (const bank of BANKS) {
  for (const key of [bank.code, bankKey(bank.name), ...bank.aliases]) {
    if (BANKS_BY_KEY.get(key)?.code !== undefined && BANKS_BY_KEY.get(key)?.code !== bank.code) throw new Error(`invariant: bank key ${key} names two banks`);
    BANKS_BY_KEY.set(key, { code: bank.code, name: bank.name });
  }
}

/**
 * The bank a caller asked for: a known code, name or common short form ("058", "GTBank",
 * "gt bank plc", "Guaranty Trust") gives its code and full name; anything else is echoed as given
 * (spaces collapsed), as both code and name.
 */
export function resolveBank(asked: string): { code: string; name: string } {
  const known = BANKS_BY_KEY.get(/^\d+$/.test(asked.trim()) ? asked.trim() : bankKey(asked));
  if (known !== undefined) return known;
  const echoed = asked.trim().replace(/\s+/g, ' ');
  return { code: echoed, name: echoed };
}

export function bankByCode(code: string): { code: string; name: string } {
  const bank = BANKS_BY_KEY.get(code);
  if (bank === undefined) throw new Error('invariant: unknown home bank code');
  return bank;
}
