/**
 * Plain terms' words for people: what the terms are called, money in their
 * currency, a line's and a request's words, and how a thread reads in
 * history. Every value passed in is the agent's or its counterparty's text
 * and is only ever placed in text nodes.
 */
import type { Amount, GateRequest, InboxItem, Money, PlainLineItem } from "../../backend";
import * as fmt from "../../model/format";
import { compareDecimals } from "../../model/money";

/**
 * "terms", or "revised terms" when the entry revises an earlier request
 * (`PlainEntryRef.revises`). The inbox row alone cannot tell: its kind is
 * `plain.terms` either way, so only a caller holding the view passes `revises`.
 */
export function plainNoun(_item: Pick<InboxItem, "kind" | "is_draft">, revises = false): string {
  return revises ? "revised terms" : "terms";
}

/** An exact amount with its currency, regrouped for the locale: "3,750.00 USD"; "—" for none. */
export function plainMoney(value: Money | null | undefined, currency: string): string {
  return value === null || value === undefined ? "—" : fmt.money(value, currency);
}

/** A line's quantity with its unit: "12 seats", "2.5" (each). */
export function quantityWords(line: Pick<PlainLineItem, "quantity" | "unit">): string {
  const quantity = fmt.amount(line.quantity);
  return line.unit ? `${quantity} ${line.unit}` : quantity;
}

/** "1 line", "3 lines". */
export function linesWords(count: number): string {
  return `${fmt.count(count)} line${count === 1 ? "" : "s"}`;
}

/** A line diff field's name for people. */
export function lineFieldWords(field: string): string {
  switch (field) {
    case "unit_price": return "unit price";
    case "sku": return "SKU";
    default: return field.replace(/_/g, " ");
  }
}

/**
 * Where the amount asked about stands against the policy's threshold, said
 * only when it can be read exactly; null for no threshold (or a zero one,
 * which a policy without an amount band names).
 */
export function thresholdWords(request: Pick<GateRequest, "amount" | "threshold">): string | null {
  const threshold: Amount | null = request.threshold;
  if (!threshold || compareDecimals(threshold.value, "0") === 0) return null;
  const written = fmt.money(threshold.value, threshold.currency);
  const amount = request.amount;
  const order = amount && amount.currency === threshold.currency ? compareDecimals(amount.value, threshold.value) : null;
  if (order === 1) return `It is above the policy's threshold of ${written}.`;
  if (order !== null) return `It is within the policy's threshold of ${written}.`;
  return `The policy's threshold is ${written}.`;
}

/** A plain-terms thread's words in history: entries the host wrote and signed, chained one to the next. */
export const plainSession = {
  entry: "entry",
  entries: "entries",
  seriesTitle: "Totals asked about, in the order they were asked",
  exportHint: "JSON: the thread's entries as the host wrote and signed them with its platform key (each chained to the one before), and every decision (its ApprovalReceipt over an entry's hash) as it was sent. CSV: one row per term of every entry (the agent's report too) and per field of every decision you sent.",
  /** Plain entry types as words. */
  kinds: {
    "plain.terms": "Terms asked about",
    "plain.outcome": "Outcome reported",
  },
};
