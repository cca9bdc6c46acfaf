/**
 * Display of exact decimal strings. Nothing here converts a price to a float:
 * amounts stay strings and are only regrouped and signed for people.
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

/** Groups the integer part in thousands: "1140000.50" → "1,140,000.50". */
export function groupThousands(amount: Money): string {
  const text = amount.trim();
  const sign = text.startsWith("-") ? "−" : "";
  const unsigned = text.replace(/^[+-]/, "");
  const [whole, fraction] = unsigned.split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return sign + grouped + (fraction !== undefined ? "." + fraction : "");
}

/** An amount with its currency, e.g. "570,000 USD". */
export function formatMoney(amount: Money, currency?: string | null): string {
  return currency ? `${groupThousands(amount)} ${currency}` : groupThousands(amount);
}

/** A change with an explicit sign, so meaning never rests on colour: "+1,200", "−300", "0". */
export function formatSigned(amount: Money): string {
  const sign = signOf(amount);
  const magnitude = groupThousands(amount.trim().replace(/^[+-]/, ""));
  if (sign === 0) return "0";
  return (sign > 0 ? "+" : "−") + magnitude;
}

/** A two-place percent string with its sign, or an empty string when unknown. */
export function formatPercent(percent: string | null): string {
  if (percent === null) return "";
  return formatSigned(percent) + "%";
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
