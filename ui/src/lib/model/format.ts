/**
 * The one place the interface writes numbers and times for people:
 * "570,000 USD · expires in 2 d 23 h (Fri 4 Dec, 06:53)".
 *
 * - Amounts are the engine's exact decimal strings. They are regrouped digit
 *   by digit with the locale's marks (read from Intl once); no price ever
 *   becomes a float here.
 * - Times are written with Intl in the machine's locale and time zone, which
 *   the engine reports in `app_state` (so notifications, written by the Rust
 *   side's crates/humanize, read the same). Until then, the webview's own.
 * - Spans are two units at most, rounded down: "2 d 23 h", "3 h 5 min",
 *   "12 min 4 s", "45 s". The words around them are the console's English.
 */
import type { Money } from "../backend";

/** Which locale and zone to write in. */
export interface FormatContext {
  /** A BCP 47 tag ("en-GB"). */
  locale: string;
  /** A tz database name ("Europe/Berlin"); the webview's zone when absent. */
  timeZone?: string;
}

const FALLBACK: FormatContext = { locale: "en-GB" };

function usable(context: FormatContext): FormatContext {
  try {
    new Intl.DateTimeFormat(context.locale, { timeZone: context.timeZone });
    return context;
  } catch {
    // An unknown tag or zone: the locale alone, else the fallback.
    try {
      new Intl.NumberFormat(context.locale);
      return { locale: context.locale };
    } catch {
      return FALLBACK;
    }
  }
}

let current: FormatContext = usable({
  locale: typeof navigator !== "undefined" && navigator.language ? navigator.language : FALLBACK.locale,
});

/** Sets the locale and zone everything is written in (the app does, from `app_state`). */
export function setFormatContext(context: { locale: string; timeZone?: string | null }): void {
  current = usable({ locale: context.locale, timeZone: context.timeZone ?? undefined });
  marksCache.clear();
}

/** The locale and zone in effect. */
export function formatContext(): FormatContext {
  return current;
}

interface Marks { group: string; decimal: string; minGrouping: number }
const marksCache = new Map<string, Marks>();

/** The locale's group and decimal marks, and from how many digits it groups (Spanish: 5). */
function marks(locale: string): Marks {
  const cached = marksCache.get(locale);
  if (cached) return cached;
  // The locale's own grouping ("auto"): a four-digit number shows whether it groups from five digits.
  const format = new Intl.NumberFormat(locale);
  const parts = format.formatToParts(1234567.5);
  const group = parts.find((p) => p.type === "group")?.value ?? ",";
  const decimal = parts.find((p) => p.type === "decimal")?.value ?? ".";
  const minGrouping = format.formatToParts(1234).some((p) => p.type === "group") ? 1 : 2;
  const found = { group, decimal, minGrouping };
  marksCache.set(locale, found);
  return found;
}

const DECIMAL = /^[+-]?\d+(\.\d+)?$/;

/**
 * An exact decimal regrouped: "1140000.50" → "1,140,000.50" (en), "1.140.000,50" (de).
 * A negative amount takes a true minus sign; text that is not a plain decimal is shown as given.
 */
export function amount(decimal: Money, context: FormatContext = current): string {
  const text = decimal.trim();
  if (!DECIMAL.test(text)) return text;
  const { group, decimal: point, minGrouping } = marks(context.locale);
  const negative = text.startsWith("-") && /[1-9]/.test(text);
  const [whole, fraction] = text.replace(/^[+-]/, "").split(".");
  const grouped = whole.length > 3 + (minGrouping - 1) ? whole.replace(/\B(?=(\d{3})+(?!\d))/g, group) : whole;
  return (negative ? "−" : "") + grouped + (fraction !== undefined ? point + fraction : "");
}

/** An amount with its currency code after it: "570,000 USD". */
export function money(decimal: Money, currency?: string | null, context: FormatContext = current): string {
  const code = (currency ?? "").trim();
  return code ? `${amount(decimal, context)} ${code}` : amount(decimal, context);
}

/** A change with an explicit sign, so meaning never rests on colour: "+1,200", "−300", "0". */
export function signed(decimal: Money, context: FormatContext = current): string {
  const text = decimal.trim();
  const magnitude = amount(text.replace(/^[+-]/, ""), context);
  if (!/[1-9]/.test(text)) return "0";
  return (text.startsWith("-") ? "−" : "+") + magnitude;
}

/** A two-place percent string with its sign ("−5.26%"), or "" when unknown. */
export function percent(value: string | null, context: FormatContext = current): string {
  return value === null ? "" : `${signed(value, context)}%`;
}

/** A count: 1234 → "1,234". */
export function count(n: number, context: FormatContext = current): string {
  return amount(String(Math.trunc(n)), context);
}

/** Seconds as people write a span: two units at most, rounded down, a zero second unit left out. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const pair = (big: number, bigUnit: string, small: number, smallUnit: string) =>
    small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
  if (s >= 86_400) return pair(Math.floor(s / 86_400), "d", Math.floor((s % 86_400) / 3_600), "h");
  if (s >= 3_600) return pair(Math.floor(s / 3_600), "h", Math.floor((s % 3_600) / 60), "min");
  if (s >= 60) return pair(Math.floor(s / 60), "min", s % 60, "s");
  return `${s} s`;
}

/** Whole seconds from `now` to `iso` (truncated toward zero), or null when it is not a time. */
function secondsUntil(iso: string, now: number): number | null {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? null : Math.trunc((at - now) / 1000);
}

/** "in 2 d 23 h", "3 min ago", "now"; unreadable text is shown as given. */
export function relative(iso: string, now: number): string {
  const seconds = secondsUntil(iso, now);
  if (seconds === null) return iso;
  if (seconds === 0) return "now";
  return seconds > 0 ? `in ${duration(seconds)}` : `${duration(-seconds)} ago`;
}

/** A countdown to an expiry: its text ("2 d 23 h"), whether it is over, whether it is close (10 min). */
export interface Countdown { text: string; expired: boolean; urgent: boolean }

export function countdown(iso: string, now: number): Countdown {
  const seconds = secondsUntil(iso, now);
  if (seconds === null) return { text: "unknown expiry", expired: false, urgent: true };
  if (seconds <= 0) return { text: "expired", expired: true, urgent: true };
  return { text: duration(seconds), expired: false, urgent: seconds < 600 };
}

function yearIn(date: Date, context: FormatContext): string {
  return new Intl.DateTimeFormat("en-GB", { year: "numeric", timeZone: context.timeZone }).format(date);
}

/**
 * The order of a date for the languages crates/humanize writes too (this
 * year, another year): the screen assembles Intl's parts in the same order,
 * so a notification and the inbox agree whatever ICU the webview carries
 * (ICU 72 puts a comma after an English weekday, later ones do not).
 */
const PATTERNS: Record<string, readonly [string, string]> = {
  // One shape with or without the year: "Fri 4 Dec, 10:39", "Thu 4 Mar 2027, 11:03".
  "en-GB": ["{w} {d} {m}, {t}", "{w} {d} {m} {y}, {t}"],
  "en-US": ["{w}, {m} {d}, {t}", "{w}, {m} {d}, {y}, {t}"],
  de: ["{w}, {d}. {m}, {t}", "{w}, {d}. {m} {y}, {t}"],
  fr: ["{w} {d} {m}, {t}", "{w} {d} {m} {y}, {t}"],
  es: ["{w}, {d} {m}, {t}", "{w}, {d} {m} {y}, {t}"],
  nl: ["{w} {d} {m}, {t}", "{w} {d} {m} {y}, {t}"],
};

/** Which pattern a locale takes, as crates/humanize resolves it (other languages: Intl's own). */
function patternOf(locale: string): readonly [string, string] | null {
  const [language, region] = locale.split("-");
  if (language === "en") return region === "US" ? PATTERNS["en-US"] : PATTERNS["en-GB"];
  return PATTERNS[language] ?? null;
}

/**
 * A time as a person writes it, in the context's zone: "Fri 4 Dec, 06:53" (en-GB),
 * with the year when it is not `now`'s year there. Unreadable text is shown as given.
 */
export function absolute(iso: string | null, now: number = Date.now(), context: FormatContext = current): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const sameYear = yearIn(date, context) === yearIn(new Date(now), context);
  const format = new Intl.DateTimeFormat(context.locale, {
    weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
    ...(sameYear ? {} : { year: "numeric" }),
    timeZone: context.timeZone,
  });
  const pattern = patternOf(context.locale);
  if (!pattern) return format.format(date);
  const parts = new Map(format.formatToParts(date).map((p) => [p.type, p.value]));
  const period = parts.get("dayPeriod");
  const time = `${parts.get("hour")}:${parts.get("minute")}${period ? `\u202f${period}` : ""}`;
  return (sameYear ? pattern[0] : pattern[1])
    .replace("{w}", parts.get("weekday") ?? "")
    .replace("{d}", parts.get("day") ?? "")
    .replace("{m}", parts.get("month") ?? "")
    .replace("{y}", parts.get("year") ?? "")
    .replace("{t}", time);
}

/** "expires in 2 d 23 h (Fri 4 Dec, 06:53)", or "expired 3 min ago (…)". */
export function expiry(iso: string, now: number, context: FormatContext = current): string {
  const seconds = secondsUntil(iso, now);
  if (seconds === null) return `expires ${iso}`;
  const verb = seconds > 0 ? "expires" : "expired";
  return `${verb} ${relative(iso, now)} (${absolute(iso, now, context)})`;
}

/** A proposal's amount and expiry in one line: "570,000 USD · expires in 2 d 23 h (Fri 4 Dec, 06:53)". */
export function amountAndExpiry(decimal: Money, currency: string, iso: string, now: number, context: FormatContext = current): string {
  return `${money(decimal, currency, context)} · ${expiry(iso, now, context)}`;
}

/**
 * A calendar day (`YYYY-MM-DD`, a day in some zone, not a moment) as a person writes it:
 * "Thu 10 Dec" (en-GB), with the year when it is not the year of `today` (also `YYYY-MM-DD`).
 * Text that is not such a day is shown as given.
 */
export function day(ymd: string, today?: string, context: FormatContext = current): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(ymd);
  if (!match) return ymd;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  if (Number.isNaN(date.getTime())) return ymd;
  const sameYear = !today || today.slice(0, 4) === match[1];
  // The day is the same everywhere: it is written in UTC, where it was made.
  const format = new Intl.DateTimeFormat(context.locale, {
    weekday: "short", day: "numeric", month: "short", ...(sameYear ? {} : { year: "numeric" }), timeZone: "UTC",
  });
  const pattern = patternOf(context.locale);
  if (!pattern) return format.format(date);
  const parts = new Map(format.formatToParts(date).map((p) => [p.type, p.value]));
  return (sameYear ? pattern[0] : pattern[1]).replace(", {t}", "")
    .replace("{w}", parts.get("weekday") ?? "")
    .replace("{d}", parts.get("day") ?? "")
    .replace("{m}", parts.get("month") ?? "")
    .replace("{y}", parts.get("year") ?? "");
}

/** A calendar day (`YYYY-MM-DD`) of `now` in the context's zone: what "today" is for the person. */
export function today(now: number = Date.now(), context: FormatContext = current): string {
  const parts = new Map(new Intl.DateTimeFormat("en-GB", {
    year: "numeric", month: "2-digit", day: "2-digit", timeZone: context.timeZone,
  }).formatToParts(new Date(now)).map((p) => [p.type, p.value]));
  return `${parts.get("year")}-${parts.get("month")}-${parts.get("day")}`;
}

/**
 * A calendar month (`YYYY-MM`) as a person writes it: "Dec 2026" (en-GB), "Dez. 2026" (de),
 * or only "Dec" when `withYear` is false. Text that is not such a month is shown as given.
 */
export function month(ym: string, withYear = true, context: FormatContext = current): string {
  const match = /^(\d{4})-(\d{2})$/.exec(ym);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 12) return ym;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1));
  return new Intl.DateTimeFormat(context.locale, {
    month: "short", ...(withYear ? { year: "numeric" } : {}), timeZone: "UTC",
  }).format(date);
}

/**
 * The day of a moment, short, in the context's zone: "4 Dec" (en-GB), with the year
 * when it is not `now`'s year there ("4 Dec 2025"). Unreadable text is shown as given.
 */
export function shortDay(iso: string, now: number = Date.now(), context: FormatContext = current): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const sameYear = yearIn(date, context) === yearIn(new Date(now), context);
  return new Intl.DateTimeFormat(context.locale, {
    day: "numeric", month: "short", ...(sameYear ? {} : { year: "numeric" }), timeZone: context.timeZone,
  }).format(date);
}
