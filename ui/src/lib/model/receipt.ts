/** A signed ApprovalReceipt as history lists it: its id, decision, what it binds, and the terms it covers when it carries a terms record. */
export interface ReceiptLines {
  id: string;
  decision: string;
  hash: string;
  /** "access: a, b · promises: c" when `scope.terms` lists them (ANEX), else null. */
  terms: string | null;
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const strings = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : null;

/** Reads what a person checks of a receipt; anything missing reads as empty, never as markup. */
export function receiptLines(receipt: Record<string, unknown>): ReceiptLines {
  const scope = (receipt.scope ?? {}) as Record<string, unknown>;
  const terms = (scope.terms ?? {}) as Record<string, unknown>;
  const access = strings(terms.access);
  const promise = strings(terms.promise);
  return {
    id: text(receipt.id),
    decision: text(scope.decision),
    hash: text(scope.offer_hash),
    terms: access ? `access: ${access.join(", ")} · promises: ${promise && promise.length > 0 ? promise.join("; ") : "none"}` : null,
  };
}
