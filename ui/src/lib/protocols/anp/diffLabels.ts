/** Words for the structured diff, so every status reads without colour. */
import type { AnpLineItemDiff as LineItemDiff } from "../../backend";

const FIELD_LABELS: Record<string, string> = {
  sku: "SKU", description: "Description", quantity: "Quantity", unit: "Unit",
  unit_price: "Unit price", currency: "Currency", term_months: "Term (months)",
};

/** A field's name for people. */
export function fieldLabel(field: string): string {
  return FIELD_LABELS[field] ?? field.replace(/_/g, " ");
}

/** The words for a line item's status: "added", "changed, moved", "unchanged"… */
export function statusWords(row: LineItemDiff): string {
  if (row.status === "unchanged") return row.moved ? "moved" : "unchanged";
  return row.moved ? `${row.status}, moved` : row.status;
}

/** The row's position change, e.g. "line 3 → 1", or an empty string. */
export function positionText(row: LineItemDiff): string {
  if (!row.moved || row.old_index === null || row.new_index === null) return "";
  return `line ${row.old_index + 1} → ${row.new_index + 1}`;
}
