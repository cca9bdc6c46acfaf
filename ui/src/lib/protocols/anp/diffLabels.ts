/** Words for the structured diff, so every status reads without colour. */
import type { AnpLineItemDiff as LineItemDiff } from "../../backend";

import { label } from "../../model/labels";

/** A field's name for people (the one label map's). */
export function fieldLabel(field: string): string {
  return label(field);
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
