/**
 * Geometry of the desk's line charts: agreed money and what was won per
 * month, and a counterparty's opening asks against what was agreed. One
 * panel per currency, each on its own scale (amounts in two currencies are
 * never drawn as if comparable, let alone added). Amounts become floats here
 * only to place points on screen; every number a person reads is the
 * engine's exact decimal, written by `format.ts` (axis ticks are round
 * numbers of the scale, not amounts).
 */
import type { Money, MonthFigures, SessionWin } from "../backend";
import { round1 } from "./chart";
import * as fmt from "./format";

/** What a line stands for; its look (colour, dash, marker) follows. */
export type LineKind = "agreed" | "won" | "opening";

/** A placed point with the exact amount it stands for. */
export interface LinePoint {
  x: number;
  y: number;
  /** The exact decimal. */
  value: Money;
  /** Where it sits across, in words ("Mar 2026", "4 Dec"). */
  at: string;
}

/** One line of a panel. */
export interface LineSeries {
  kind: LineKind;
  label: string;
  points: LinePoint[];
}

/** One currency's chart, and the same figures as a table (the text alternative). */
export interface LinePanel {
  currency: string;
  width: number;
  height: number;
  series: LineSeries[];
  yTicks: { y: number; label: string }[];
  xTicks: { x: number; label: string }[];
  /** Where zero is, when the scale crosses it. */
  zeroY: number | null;
  /** The table's header after its first column, one per series. */
  columns: string[];
  /** The table's rows: where across, and each series' exact amount there (null: none). */
  rows: { label: string; values: (string | null)[] }[];
}

/** The plot's margins (room for the axes' labels). */
export const MARGIN = { left: 80, right: 16, top: 12, bottom: 28 };

/** A round step of about `span / count`: 1, 2 or 5 times a power of ten. */
export function niceStep(span: number, count = 4): number {
  const raw = Math.abs(span) / count || 1;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / magnitude;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
}

/** A vertical scale over `values` that always shows zero, with round ticks labelled in the person's number format. */
export function yScale(values: readonly number[], height: number) {
  const finite = values.filter((v) => Number.isFinite(v));
  let low = Math.min(0, ...finite);
  let high = Math.max(0, ...finite);
  if (high === low) high = low + 1;
  const step = niceStep(high - low);
  low = Math.floor(low / step) * step;
  high = Math.ceil(high / step) * step;
  const decimals = step >= 1 ? 0 : Math.ceil(-Math.log10(step));
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const yOf = (value: number) => round1(MARGIN.top + plotH - ((value - low) / (high - low)) * plotH);
  const count = Math.round((high - low) / step);
  const yTicks = Array.from({ length: count + 1 }, (_, i) => {
    const value = low + i * step;
    return { y: yOf(value), label: fmt.amount(value.toFixed(decimals)) };
  });
  return { yOf, yTicks, zeroY: low < 0 ? yOf(0) : null };
}

/** Every month from `first` to `last` (`YYYY-MM`), both included. */
export function monthSpan(first: string, last: string): string[] {
  const out: string[] = [];
  let [year, month] = first.split("-").map(Number);
  const [lastYear, lastMonth] = last.split("-").map(Number);
  if (![year, month, lastYear, lastMonth].every(Number.isFinite)) return [];
  while (year < lastYear || (year === lastYear && month <= lastMonth)) {
    out.push(`${year}-${String(month).padStart(2, "0")}`);
    month += 1;
    if (month > 12) { month = 1; year += 1; }
    if (out.length > 1200) break;
  }
  return out;
}

function currencies(items: readonly { currency: string | null }[]): string[] {
  return [...new Set(items.map((i) => i.currency).filter((c): c is string => !!c))].sort();
}

/**
 * The desk's chart: per currency, the agreed money and what was won in each
 * month from the first to the last month with an agreement (a month without
 * one is zero: nothing was agreed in it), on one time axis for every panel.
 */
export function monthPanels(months: readonly MonthFigures[], width = 560, height = 200): LinePanel[] {
  if (months.length === 0) return [];
  const sorted = [...months.map((m) => m.month)].sort();
  const span = monthSpan(sorted[0], sorted[sorted.length - 1]);
  const plotW = width - MARGIN.left - MARGIN.right;
  const xOf = (i: number) => round1(MARGIN.left + (span.length === 1 ? plotW / 2 : (i / (span.length - 1)) * plotW));
  const every = Math.ceil(span.length / 12);
  const xTicks = span
    .map((m, i) => ({ x: xOf(i), label: fmt.month(m, i === 0 || m.endsWith("-01")), i }))
    .filter((t) => t.i % every === 0)
    .map(({ x, label }) => ({ x, label }));
  return currencies(months).map((currency) => {
    const of = (m: string) => months.find((f) => f.month === m && f.currency === currency);
    const agreed = span.map((m) => of(m)?.agreed_total ?? "0");
    const won = span.map((m) => of(m)?.won ?? "0");
    const { yOf, yTicks, zeroY } = yScale([...agreed, ...won].map(Number), height);
    const line = (values: string[]) => values.map((value, i) => ({ x: xOf(i), y: yOf(Number(value)), value, at: fmt.month(span[i]) }));
    return {
      currency, width, height, yTicks, xTicks, zeroY,
      series: [
        { kind: "agreed" as const, label: "agreed", points: line(agreed) },
        { kind: "won" as const, label: "won against opening asks", points: line(won) },
      ],
      columns: ["Agreed", "Won"],
      rows: span.map((m, i) => ({
        label: fmt.month(m),
        values: [fmt.money(agreed[i], currency), fmt.money(won[i], currency)],
      })),
    };
  });
}

/**
 * A counterparty's chart: per currency, each session's opening ask and the
 * amount agreed, placed by when the session opened. An opening ask in
 * another currency than the agreement (the engine then names no win) is left out.
 */
export function winPanels(sessions: readonly SessionWin[], width = 560, height = 200, now: number = Date.now()): LinePanel[] {
  const dated = [...sessions]
    .filter((s) => s.currency && !Number.isNaN(Date.parse(s.opened_at)) && (s.opening !== null || s.agreed !== null))
    .sort((a, b) => Date.parse(a.opened_at) - Date.parse(b.opened_at));
  if (dated.length === 0) return [];
  const times = dated.map((s) => Date.parse(s.opened_at));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const plotW = width - MARGIN.left - MARGIN.right;
  const xOf = (iso: string) => round1(MARGIN.left + (last === first ? plotW / 2 : ((Date.parse(iso) - first) / (last - first)) * plotW));
  const edge = (t: number) => dated.find((s) => Date.parse(s.opened_at) === t)!.opened_at;
  const xTicks = [...new Set([first, last])].map((t) => ({ x: xOf(edge(t)), label: fmt.shortDay(edge(t), now) }));
  return currencies(dated).map((currency) => {
    const mine = dated.filter((s) => s.currency === currency);
    // An opening ask counts only where it is in this currency: with an agreement, the engine names a win only then.
    const opening = (s: SessionWin) => (s.opening !== null && (s.agreed === null || s.won !== null) ? s.opening : null);
    const { yOf, yTicks, zeroY } = yScale(mine.flatMap((s) => [opening(s), s.agreed]).filter((v): v is string => v !== null).map(Number), height);
    const line = (pick: (s: SessionWin) => string | null) => mine.flatMap((s) => {
      const value = pick(s);
      return value === null ? [] : [{ x: xOf(s.opened_at), y: yOf(Number(value)), value, at: fmt.shortDay(s.opened_at, now) }];
    });
    return {
      currency, width, height, yTicks, xTicks, zeroY,
      series: [
        { kind: "opening" as const, label: "opening ask", points: line(opening) },
        { kind: "agreed" as const, label: "agreed", points: line((s) => s.agreed) },
      ],
      columns: ["Opening ask", "Agreed"],
      rows: mine.map((s) => {
        const o = opening(s);
        return {
          label: fmt.absolute(s.opened_at, now),
          values: [o === null ? null : fmt.money(o, currency), s.agreed === null ? null : fmt.money(s.agreed, currency)],
        };
      }),
    };
  });
}

/** A panel in words, for those who cannot see it: every line's exact amounts, in order. */
export function panelSummary(panel: LinePanel, title: string): string {
  const lines = panel.series.map((s) =>
    `${s.label}: ${s.points.length ? s.points.map((p) => `${p.at} ${fmt.money(p.value, panel.currency)}`).join(", ") : "none"}`);
  return `${title} in ${panel.currency}. ${lines.join("; ")}.`;
}
