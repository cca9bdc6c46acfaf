/**
 * Plain terms as a person reads and edits them. Every amount is the host's
 * exact decimal text: a line's total (quantity × unit price) and the sum of
 * the lines are computed here on integers scaled by powers of ten (BigInt),
 * never on floats, and written as the host writes money (`crates/plain`'s
 * `money_text`: trailing zeros dropped, at least two decimals kept). The
 * counter a person writes is terms in the same form, amounts as typed text.
 */
import type { FieldError, Money, PlainLineItem, PlainTerms } from "../../backend";
import { typedAmount } from "../../model/money";

const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/** An exact decimal as an integer and a power of ten: "12.50" → 1250n, scale 2. */
interface Scaled { units: bigint; scale: number }

function parse(text: Money): Scaled | null {
  const match = DECIMAL.exec(text.trim());
  if (!match) return null;
  const fraction = match[3] ?? "";
  const units = BigInt(`${match[2]}${fraction}`);
  return { units: match[1] === "-" ? -units : units, scale: fraction.length };
}

/** Decimal text of `units` × 10^-scale, every place kept ("1250", 2 → "12.50"). */
function write({ units, scale }: Scaled): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const text = scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return negative ? `-${text}` : text;
}

/** `a` × `b`, exactly, with every decimal place of the product ("2.5" × "19.99" → "49.975"); null unless both are decimals. */
export function multiplyDecimals(a: Money, b: Money): string | null {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return null;
  return write({ units: x.units * y.units, scale: x.scale + y.scale });
}

/** `a` + `b`, exactly ("0.1" + "0.2" → "0.3"); null unless both are decimals. */
export function addDecimals(a: Money, b: Money): string | null {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return null;
  const scale = Math.max(x.scale, y.scale);
  const up = (v: Scaled) => v.units * 10n ** BigInt(scale - v.scale);
  return write({ units: up(x) + up(y), scale });
}

/** An amount as the host writes money: trailing zeros dropped, at least two decimals ("49.9750" → "49.975", "3750" → "3750.00"). */
export function moneyText(decimal: Money): string {
  const match = DECIMAL.exec(decimal.trim());
  if (!match) return decimal;
  const fraction = (match[3] ?? "").replace(/0+$/, "").padEnd(2, "0");
  const whole = match[2].replace(/^0+(?=\d)/, "");
  const negative = match[1] === "-" && /[1-9]/.test(whole + fraction);
  return `${negative ? "-" : ""}${whole}.${fraction}`;
}

/** One line's total, quantity × unit price, as money text; null when either is not a decimal. */
export function lineTotal(line: Pick<PlainLineItem, "quantity" | "unit_price">): string | null {
  const product = multiplyDecimals(line.quantity, line.unit_price);
  return product === null ? null : moneyText(product);
}

/** The sum of every line's total, as money text; null when a line does not compute. */
export function linesTotal(lines: readonly Pick<PlainLineItem, "quantity" | "unit_price">[]): string | null {
  let sum = "0";
  for (const line of lines) {
    const product = multiplyDecimals(line.quantity, line.unit_price);
    const next = product === null ? null : addDecimals(sum, product);
    if (next === null) return null;
    sum = next;
  }
  return moneyText(sum);
}

/** One line of a counter as the person edits it: quantity and unit price as typed, the rest as the agent wrote it. */
export interface PlainLineDraft {
  description: string;
  sku: string | null;
  unit: string | null;
  quantity: string;
  unit_price: string;
}

/** A counter being written: the lines kept, the term, the conditions (each as typed). */
export interface PlainDraft {
  line_items: PlainLineDraft[];
  term: string;
  conditions: string[];
}

/** The counter as the editor starts it: the agent's own terms, so the person edits rather than retypes. */
export function draftFromTerms(terms: PlainTerms): PlainDraft {
  return {
    line_items: terms.line_items.map((line) => ({
      description: line.description,
      sku: line.sku ?? null,
      unit: line.unit ?? null,
      quantity: line.quantity,
      unit_price: line.unit_price,
    })),
    term: terms.term ?? "",
    conditions: [...terms.conditions],
  };
}

/** A counter in plain terms' own form: what the engine checks and the decision carries (no `total`: the host computes it). */
export interface PlainCounter {
  counterparty: { name: string; id: string };
  currency: string;
  line_items: { description: string; sku?: string; quantity: string; unit?: string; unit_price: string }[];
  term?: string;
  conditions: string[];
}

/** A typed amount as the wire's exact decimal text: "1,250.50" → "1250.50"; anything else trimmed, as typed, for the engine to judge. */
export function amountText(typed: string): string {
  return typedAmount(typed) ?? typed.trim();
}

/**
 * The counter the draft describes, with which draft condition each sent
 * condition is (blank conditions are left out, so the engine's
 * `conditions[i]` is the draft's `conditionAt[i]`). Counterparty and
 * currency are the agent's: a counter never changes them.
 */
export function counterFromDraft(terms: PlainTerms, draft: PlainDraft): { counter: PlainCounter; conditionAt: number[] } {
  const conditionAt: number[] = [];
  const conditions: string[] = [];
  draft.conditions.forEach((condition, i) => {
    const text = condition.trim();
    if (text === "") return;
    conditionAt.push(i);
    conditions.push(text);
  });
  const term = draft.term.trim();
  const counter: PlainCounter = {
    counterparty: { name: terms.counterparty.name, id: terms.counterparty.id },
    currency: terms.currency,
    line_items: draft.line_items.map((line) => ({
      description: line.description,
      ...(line.sku ? { sku: line.sku } : {}),
      quantity: amountText(line.quantity),
      ...(line.unit ? { unit: line.unit } : {}),
      unit_price: amountText(line.unit_price),
    })),
    ...(term ? { term } : {}),
    conditions,
  };
  return { counter, conditionAt };
}

/**
 * Where an engine error belongs, in one spelling: "line_items[0].unit_price",
 * "/line_items/0/unit_price" and "counter_terms.line_items[0].unit_price"
 * all become "line_items.0.unit_price".
 */
export function fieldKey(path: string): string {
  return path
    .replace(/\[(\d+)\]/g, ".$1")
    .replace(/\//g, ".")
    .replace(/^\.+|\.+$/g, "")
    .replace(/^(counter_terms|terms)\./, "");
}

/** A readable name for an error path: "line_items.1.unit_price" → "Line 2, unit price"; "" → "The terms". */
export function fieldName(path: string): string {
  const parts = fieldKey(path).split(".").filter(Boolean);
  if (parts.length === 0) return "The terms";
  const words: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const next = parts[i + 1] ?? "";
    if (part === "line_items" && /^\d+$/.test(next)) {
      words.push(`Line ${Number(next) + 1}`);
      i++;
    } else if (part === "conditions" && /^\d+$/.test(next)) {
      words.push(`Condition ${Number(next) + 1}`);
      i++;
    } else {
      words.push(part.replace(/_/g, " "));
    }
  }
  const text = words.join(", ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Errors by the key of the field they belong to (see `fieldKey`). */
export function errorsByField(errors: readonly FieldError[]): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const error of errors) {
    const key = fieldKey(error.path);
    grouped.set(key, [...(grouped.get(key) ?? []), error.message]);
  }
  return grouped;
}
