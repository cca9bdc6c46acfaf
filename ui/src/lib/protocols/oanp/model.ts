/**
 * OANP counter terms as a person edits them: the price typed in major units
 * ("405.00") and turned into integer minor units by string arithmetic (never
 * a float), with the currency's exponent read from the offer's own exact
 * amount; inclusions as kinds.
 */
import type { OanpMoney, OanpTerms } from "../../backend";

/** Decimal places of the currency, from the offer's exact amount; null when unknown. */
export function exponentOf(money: OanpMoney): number | null {
  if (!money.amount) return null;
  const point = money.amount.value.indexOf(".");
  return point < 0 ? 0 : money.amount.value.length - point - 1;
}

/** "405.5" with exponent 2 → "40550"; null unless it is a positive amount with at most that many decimals. */
export function toMinor(text: string, exponent: number): string | null {
  const match = /^(\d+)(?:\.(\d*))?$/.exec(text.trim());
  if (!match) return null;
  const fraction = match[2] ?? "";
  if (fraction.length > exponent) return null;
  const digits = (match[1] + fraction.padEnd(exponent, "0")).replace(/^0+(?=\d)/, "");
  return /^0+$/.test(digits) ? null : digits;
}

/** The price as the editor starts it: the offer's, in major units (minor units when the exponent is unknown). */
export function priceText(money: OanpMoney): string {
  return money.amount ? money.amount.value : money.amount_minor;
}

/** The counter in OANP's own form, or a sentence saying what is wrong with the price. */
export function counterTerms(priceTyped: string, kinds: string, offer: OanpTerms): Record<string, unknown> | string {
  const exponent = exponentOf(offer.price) ?? 0;
  const minor = toMinor(priceTyped, exponent);
  if (minor === null) {
    return exponent === 0
      ? "The price is a whole number of minor units, more than zero."
      : `The price is an amount with at most ${exponent} decimals, more than zero.`;
  }
  const inclusions = kinds.split(",").map((k) => k.trim()).filter((k) => k.length > 0)
    .map((kind) => ({ kind, value: "included" }));
  // JSON cannot carry an integer beyond 2^53 exactly; the engine refuses those with a path.
  return { price: { amount_minor: Number(minor), currency: offer.price.currency }, inclusions };
}
