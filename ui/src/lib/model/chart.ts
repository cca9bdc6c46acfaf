/**
 * Geometry of the offer-totals chart. Totals become floats here only to place
 * points on screen; no price is computed or compared from these numbers.
 */
import type { SeriesPoint } from "../backend";
import * as fmt from "./format";

/** A placed point with the exact total it stands for. */
export interface PlacedPoint {
  x: number;
  y: number;
  round: number;
  /** The entry it stands for: what places it across. */
  seq: number;
  total: string;
}

/** Everything the SVG draws. */
export interface ChartGeometry {
  width: number;
  height: number;
  counterparty: PlacedPoint[];
  ours: PlacedPoint[];
  yTicks: { y: number; label: string }[];
  xTicks: { x: number; label: string }[];
  /** The agreed proposal's point, when the session agreed one that has a price. */
  agreed: PlacedPoint | null;
}

const MARGIN = { left: 72, right: 16, top: 12, bottom: 28 };

/**
 * Places both sides' totals on one shared scale, across by the order they
 * were made (their seq: our counter sent after their second offer sits after
 * it, whatever each side's round number), one step per proposal; marks the
 * agreed proposal (`agreedSeq`) when it is one of them.
 */
export function chartGeometry(
  series: { counterparty: SeriesPoint[]; ours: SeriesPoint[] },
  width = 560,
  height = 200,
  agreedSeq: number | null = null,
): ChartGeometry {
  const all = [...series.counterparty, ...series.ours];
  const values = all.map((p) => Number(p.total)).filter((v) => Number.isFinite(v));
  const order = [...new Set(all.map((p) => p.seq))].sort((a, b) => a - b);
  const step = (seq: number) => order.indexOf(seq);
  const minValue = values.length ? Math.min(...values) : 0;
  const maxValue = values.length ? Math.max(...values) : 1;
  const spread = maxValue - minValue || Math.abs(maxValue) || 1;
  const low = minValue - spread * 0.1;
  const high = maxValue + spread * 0.1;
  const steps = Math.max(order.length - 1, 0);
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const xOf = (seq: number) => MARGIN.left + (steps === 0 ? plotW / 2 : (step(seq) / steps) * plotW);
  const yOf = (value: number) => MARGIN.top + plotH - ((value - low) / (high - low)) * plotH;
  const place = (points: SeriesPoint[]) =>
    points.map((p) => ({ x: round1(xOf(p.seq)), y: round1(yOf(Number(p.total))), round: p.round, seq: p.seq, total: p.total }));
  const yTicks = [0, 0.5, 1].map((f) => {
    const value = low + (high - low) * f;
    return { y: round1(yOf(value)), label: fmt.amount(String(Math.round(value))) };
  });
  const xTicks = order.map((seq) => ({ x: round1(xOf(seq)), label: `#${seq}` }));
  const counterparty = place(series.counterparty);
  const ours = place(series.ours);
  const agreed = agreedSeq === null ? null : [...counterparty, ...ours].find((p) => p.seq === agreedSeq) ?? null;
  return { width, height, counterparty, ours, yTicks, xTicks, agreed };
}

/** An SVG `points` attribute (of any placed points: this chart's, the desk's). */
export function polyline(points: readonly { x: number; y: number }[]): string {
  return points.map((p) => `${p.x},${p.y}`).join(" ");
}

/** A coordinate rounded to a tenth of a pixel. */
export function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
