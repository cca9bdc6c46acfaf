/**
 * What exact decimal strings mean for the buyer, read without floats: their
 * sign, whether a change is better or worse. Writing them for people is
 * `format.ts`'s job.
 */
import type { Money } from "../backend";

/** What a change means for the buyer: a lower price is better. */
export type BuyerEffect = "better" | "worse" | "same" | "neutral";

const DECIMAL = /^[+-]?\d+(\.\d+)?$/;

/** True when text is a plain decimal the engine will accept as money. */
export function isDecimal(text: string): boolean {
  return DECIMAL.test(text.trim());
}

/** -1, 0 or 1 by the sign of a decimal string, read exactly. */
export function signOf(amount: Money): -1 | 0 | 1 {
  const text = amount.trim();
  const negative = text.startsWith("-");
  const digits = text.replace(/^[+-]/, "");
  if (!/[1-9]/.test(digits)) return 0;
  return negative ? -1 : 1;
}

/** Fields whose higher value costs the buyer more. */
const PRICE_FIELDS = new Set(["unit_price", "total", "total_annual", "amount"]);

/** Whether a change of `field` by `absolute` is better or worse for the buyer. */
export function buyerEffect(field: string, absolute: Money | null): BuyerEffect {
  if (!PRICE_FIELDS.has(field) || absolute === null) return "neutral";
  const sign = signOf(absolute);
  if (sign === 0) return "same";
  return sign < 0 ? "better" : "worse";
}

/** The words that carry a BuyerEffect for people who cannot see the colour. */
export function effectWords(effect: BuyerEffect): string {
  switch (effect) {
    case "better":
      return "lower, better for the buyer";
    case "worse":
      return "higher, worse for the buyer";
    case "same":
      return "no change";
    default:
      return "";
  }
}
