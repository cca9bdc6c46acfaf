/**
 * Long lists (inbox, history) render a page at a time: a thousand rows are
 * searchable and reachable by keyboard without a thousand live rows.
 */

/**
 * Rows rendered per page: about three screens. Each rendered row costs the
 * webview ~0.1 MB (DOM, style, painted tiles; measured with tests/perf.sh),
 * so a page of 100 cost 5 MB more than this one and nobody reads 100 rows
 * before acting on the first.
 */
export const PAGE = 50;

/** How many rows to render: the pages asked for, and always the selected row. */
export function shownCount(limit: number, selectedIndex: number, length: number): number {
  return Math.min(length, Math.max(limit, selectedIndex + 1));
}
