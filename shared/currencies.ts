/**
 * ISO 4217 active currency codes and their minor-unit exponents.
 *
 * Source: ISO 4217 List One (current currency & funds), as published by SIX Group, the
 * standard's maintenance agency, dated 2026-01-01. Codes whose minor unit is "N.A." (precious
 * metals XAU XAG XPD XPT, SDR XDR, bond-market units XBA–XBD, XSU, XUA, and the test and
 * no-currency codes XTS, XXX) are left out: they are not prices an order can carry.
 * Withdrawn codes (BGN, HRK, SLL, ZWL, ANG, CUC…) are refused; the list changes a few times a
 * year, and updating it is a one-line change here plus a redeploy.
 */

const BY_EXPONENT: Readonly<Record<0 | 2 | 3 | 4, string>> = {
  0: 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF',
  2: [
    'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP BYN BZD',
    'CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP',
    'GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK',
    'LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO',
    'NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS',
    'SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST',
    'XAD XCD XCG YER ZAR ZMW ZWG',
  ].join(' '),
  3: 'BHD IQD JOD KWD LYD OMR TND',
  4: 'CLF UYW',
};

const EXPONENTS: ReadonlyMap<string, number> = new Map(
  Object.entries(BY_EXPONENT).flatMap(([exponent, codes]) =>
    codes.split(' ').map((code) => [code, Number(exponent)] as const),
  ),
);

/** Every supported code, sorted. */
export const CURRENCIES: readonly string[] = [...EXPONENTS.keys()].sort();

/** The largest exponent in the list: how many fraction digits an amount may ever carry. */
export const MAX_CURRENCY_EXPONENT = Math.max(...EXPONENTS.values());

/** The ISO 4217 exponent of an active code (JPY 0, USD 2, KWD 3, CLF 4); undefined otherwise. */
export const currencyExponent = (code: string): number | undefined => EXPONENTS.get(code);
