/**
 * Long lists (inbox, history) render a page at a time: a thousand rows are
 * searchable and reachable by keyboard without a thousand live rows.
 */

/** Rows rendered per page. */
export const PAGE = 100;

/** How many rows to render: the pages asked for, and always the selected row. */
export function shownCount(limit: number, selectedIndex: number, length: number): number {
  return Math.min(length, Math.max(limit, selectedIndex + 1));
}
