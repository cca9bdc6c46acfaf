/**
 * The counter-offer editor's state: the offer as editable text fields, and the
 * exact conversion back to an Offer. ANP carries amounts as JSON numbers whose
 * meaning is their ECMAScript text, so a typed decimal becomes a number only
 * when that number prints back as exactly the same decimal; anything else is
 * sent as typed for the engine to judge. The engine validates as the protocol does.
 */
import type { AnpLineItem as LineItem, AnpOffer as Offer, FieldError as CounterError } from "../../backend";

/** One editable line item: every field as typed. */
export interface LineDraft {
  sku: string;
  description: string;
  quantity: string;
  unit: string;
  unit_price: string;
  /** The line's own term when it differs from the offer's; "" for none. */
  term_months: string;
}

/** The whole editable counter-offer. */
export interface CounterDraft {
  currency: string;
  term_months: string;
  expires_at: string;
  line_items: LineDraft[];
  total_annual: string;
  conditions: string[];
  notes: string;
}

/** Starts a counter-offer from the offer being answered, so the person edits rather than retypes. */
export function draftFromOffer(offer: Offer): CounterDraft {
  return {
    currency: offer.currency,
    term_months: String(offer.term_months),
    expires_at: offer.expires_at,
    line_items: offer.line_items.map((item) => ({
      sku: item.sku ?? "",
      description: item.description,
      quantity: String(item.quantity),
      unit: item.unit,
      unit_price: String(item.unit_price),
      term_months: item.term_months !== undefined ? String(item.term_months) : "",
    })),
    total_annual: "",
    conditions: [...(offer.conditions ?? [])],
    notes: offer.notes ?? "",
  };
}

/** A plain decimal in its shortest spelling: no "+", no leading or trailing zeros, "-0" → "0". */
function canonicalDecimal(text: string): string | null {
  const match = /^([+-]?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return null;
  const whole = match[2].replace(/^0+(?=\d)/, "");
  const fraction = (match[3] ?? "").replace(/0+$/, "");
  const digits = fraction ? `${whole}.${fraction}` : whole;
  return match[1] === "-" && /[1-9]/.test(digits) ? `-${digits}` : digits;
}

/**
 * The wire form of a typed amount: a JSON number when that number's
 * ECMAScript text is exactly the typed decimal (so nothing is rounded), else
 * the text as typed, which the engine refuses or reads exactly.
 */
export function toWireNumber(text: string): number | string {
  const trimmed = text.trim();
  const canonical = canonicalDecimal(trimmed);
  if (canonical === null) return trimmed;
  const number = Number(canonical);
  return String(number) === canonical ? number : trimmed;
}

/** The Offer the draft describes; empty optional fields are left out. */
export function offerFromDraft(draft: CounterDraft): Offer {
  const currency = draft.currency.trim();
  const line_items: LineItem[] = draft.line_items.map((line) => ({
    ...(line.sku.trim() ? { sku: line.sku.trim() } : {}),
    description: line.description,
    quantity: toWireNumber(line.quantity),
    unit: line.unit,
    unit_price: toWireNumber(line.unit_price),
    // One currency per offer (docs/protocol-notes.md): every line carries the offer's.
    currency,
    ...(line.term_months.trim() ? { term_months: toWireNumber(line.term_months) as number } : {}),
  }));
  const conditions = draft.conditions.map((c) => c.trim()).filter((c) => c.length > 0);
  return {
    currency,
    term_months: toWireNumber(draft.term_months) as number,
    expires_at: draft.expires_at.trim(),
    line_items,
    ...(draft.total_annual.trim() ? { total_annual: toWireNumber(draft.total_annual) } : {}),
    ...(conditions.length > 0 ? { conditions } : {}),
    ...(draft.notes.trim() ? { notes: draft.notes } : {}),
  };
}

/** A blank line item to fill in. */
export function blankLine(): LineDraft {
  return { sku: "", description: "", quantity: "1", unit: "", unit_price: "0", term_months: "" };
}

/** An RFC 3339 expiry `days` from `now`, to the second in UTC ("2026-12-06T09:30:00Z"). */
export function expiresIn(days: number, now: Date = new Date()): string {
  const at = new Date(now.getTime() + days * 86_400_000);
  return at.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * One spelling for an error path, whatever the engine used:
 * "/line_items/1/unit_price", "line_items[1].unit_price" and
 * "line_items.1.unit_price" all become "line_items.1.unit_price".
 */
export function normalizePath(path: string): string {
  return path
    .replace(/\[(\d+)\]/g, ".$1")
    .replace(/\//g, ".")
    .replace(/^\.+/, "")
    .replace(/\.+$/, "");
}

/** Errors grouped by their normalized path, for showing each beside its field. */
export function errorsByPath(errors: readonly CounterError[]): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const error of errors) {
    const key = normalizePath(error.path);
    grouped.set(key, [...(grouped.get(key) ?? []), error.message]);
  }
  return grouped;
}

/** A readable name for an error path: "line_items.1.unit_price" → "Line 2, unit price". */
export function pathLabel(path: string): string {
  const parts = normalizePath(path).split(".").filter(Boolean);
  if (parts.length === 0) return "Offer";
  const words: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === "line_items" && /^\d+$/.test(parts[i + 1] ?? "")) {
      words.push(`Line ${Number(parts[i + 1]) + 1}`);
      i++;
    } else if (part === "conditions" && /^\d+$/.test(parts[i + 1] ?? "")) {
      words.push(`Condition ${Number(parts[i + 1]) + 1}`);
      i++;
    } else {
      words.push(part.replace(/_/g, " "));
    }
  }
  const text = words.join(", ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}
