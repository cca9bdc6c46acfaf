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
}

const MARGIN = { left: 72, right: 16, top: 12, bottom: 28 };

/** Places both sides' totals by round on one shared scale. */
export function chartGeometry(
  series: { counterparty: SeriesPoint[]; ours: SeriesPoint[] },
  width = 560,
  height = 200,
): ChartGeometry {
  const all = [...series.counterparty, ...series.ours];
  const values = all.map((p) => Number(p.total)).filter((v) => Number.isFinite(v));
  const rounds = all.map((p) => p.round);
  const minValue = values.length ? Math.min(...values) : 0;
  const maxValue = values.length ? Math.max(...values) : 1;
  const spread = maxValue - minValue || Math.abs(maxValue) || 1;
  const low = minValue - spread * 0.1;
  const high = maxValue + spread * 0.1;
  const firstRound = rounds.length ? Math.min(...rounds) : 1;
  const lastRound = rounds.length ? Math.max(...rounds) : 1;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const xOf = (round: number) =>
    MARGIN.left + (lastRound === firstRound ? plotW / 2 : ((round - firstRound) / (lastRound - firstRound)) * plotW);
  const yOf = (value: number) => MARGIN.top + plotH - ((value - low) / (high - low)) * plotH;
  const place = (points: SeriesPoint[]) =>
    points.map((p) => ({ x: round1(xOf(p.round)), y: round1(yOf(Number(p.total))), round: p.round, total: p.total }));
  const yTicks = [0, 0.5, 1].map((f) => {
    const value = low + (high - low) * f;
    return { y: round1(yOf(value)), label: fmt.amount(String(Math.round(value))) };
  });
  const xTicks: { x: number; label: string }[] = [];
  for (let r = firstRound; r <= lastRound; r++) xTicks.push({ x: round1(xOf(r)), label: `R${r}` });
  return { width, height, counterparty: place(series.counterparty), ours: place(series.ours), yTicks, xTicks };
}

/** An SVG `points` attribute. */
export function polyline(points: PlacedPoint[]): string {
  return points.map((p) => `${p.x},${p.y}`).join(" ");
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
