/**
 * Exact decimal strings read without floats: their sign and order; and how
 * a change the engine judged (better or worse for the buyer, by its
 * protocol crate's rule) is shown. Writing them for people is `format.ts`'s job.
 */
import type { Effect, Money } from "../backend";

/** How a change is shown: the engine's better or worse, no move at all, or a move with no direction. */
export type BuyerEffect = "better" | "worse" | "same" | "neutral";

const DECIMAL = /^[+-]?\d+(\.\d+)?$/;

/** True when text is a plain decimal the engine will accept as money. */
export function isDecimal(text: string): boolean {
  return DECIMAL.test(text.trim());
}

const GROUPED = /^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/;

/**
 * An amount a person typed, as the engine's plain decimal: "100,000" and
 * "1,140,000.50" (grouping commas in threes) as well as "100000"; null for
 * anything else ("lots", "1,00", "10.000,5"), which the caller refuses.
 */
export function typedAmount(text: string): Money | null {
  const t = text.trim();
  if (DECIMAL.test(t)) return t;
  if (GROUPED.test(t)) return t.replace(/,/g, "");
  return null;
}

/** -1, 0 or 1 by the sign of a decimal string, read exactly. */
export function signOf(amount: Money): -1 | 0 | 1 {
  const text = amount.trim();
  const negative = text.startsWith("-");
  const digits = text.replace(/^[+-]/, "");
  if (!/[1-9]/.test(digits)) return 0;
  return negative ? -1 : 1;
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`, two decimal strings read
 * exactly (no floats: "150000.00" equals "150000"); null when either is not a decimal. */
export function compareDecimals(a: Money, b: Money): -1 | 0 | 1 | null {
  if (!isDecimal(a) || !isDecimal(b)) return null;
  const parts = (text: string) => {
    const t = text.trim();
    const negative = t.startsWith("-") && /[1-9]/.test(t);
    const [whole, fraction = ""] = t.replace(/^[+-]/, "").split(".");
    return { negative, whole: whole.replace(/^0+(?=\d)/, ""), fraction: fraction.replace(/0+$/, "") };
  };
  const x = parts(a);
  const y = parts(b);
  if (x.negative !== y.negative) return x.negative ? -1 : 1;
  const flip = x.negative ? -1 : 1;
  let order = 0;
  if (x.whole.length !== y.whole.length) order = x.whole.length < y.whole.length ? -1 : 1;
  else if (x.whole !== y.whole) order = x.whole < y.whole ? -1 : 1;
  else {
    const width = Math.max(x.fraction.length, y.fraction.length);
    const fx = x.fraction.padEnd(width, "0");
    const fy = y.fraction.padEnd(width, "0");
    if (fx !== fy) order = fx < fy ? -1 : 1;
  }
  return (order * flip) as -1 | 0 | 1;
}

/**
 * How to show a change: the direction the engine sent (the protocol crate's
 * rule, never guessed here from a field's name), else "same" when nothing
 * moved, else "neutral" (a move with no direction, such as a quantity).
 */
export function shownEffect(effect: Effect | null | undefined, absolute: Money | null): BuyerEffect {
  if (effect) return effect;
  return absolute !== null && signOf(absolute) === 0 ? "same" : "neutral";
}

/** The words that carry a BuyerEffect for people who cannot see the colour. */
export function effectWords(effect: BuyerEffect): string {
  switch (effect) {
    case "better":
      return "better for the buyer";
    case "worse":
      return "worse for the buyer";
    case "same":
      return "no change";
    default:
      return "";
  }
}
