/**
 * The vendor manager's desk as people read it: the range asked for, money
 * per currency (each currency its own line, never summed across them), waits
 * as spans, what each figure's sessions are called, and the audit pack's
 * query. Amounts stay the engine's exact decimal strings; `format.ts` writes them.
 */
import type {
  AuditPackQuery, CounterpartyPage, CounterpartyRow, CurrencyFigures, DeskFigure, DeskQuery, SessionRef, SessionRow, SessionState,
} from "../backend";
import * as fmt from "./format";
import { typedAmount } from "./money";

/** The range and protocol the person chose, as the inputs hold them. */
export interface DeskForm {
  /** First day, `YYYY-MM-DD` (empty: from the first session). */
  from: string;
  /** Last day, inclusive. */
  to: string;
  /** A protocol's wire name, empty for every protocol. */
  protocol: string;
}

/** The desk's default: the current year in the person's zone, every protocol. */
export function currentYear(now: number = Date.now(), context: fmt.FormatContext = fmt.formatContext()): DeskForm {
  const year = fmt.today(now, context).slice(0, 4);
  return { from: `${year}-01-01`, to: `${year}-12-31`, protocol: "" };
}

/** The query the engine reads: empty members left out, so it checks only what was typed. */
export function deskQuery(form: DeskForm): DeskQuery {
  const from = form.from.trim();
  const to = form.to.trim();
  return { ...(from ? { from } : {}), ...(to ? { to } : {}), ...(form.protocol ? { protocol: form.protocol } : {}) };
}

/** A wait as people write it ("3 h 20 min"); "—" when there was none to measure. */
export function waitText(seconds: number | null | undefined): string {
  return seconds === null || seconds === undefined ? "—" : fmt.duration(seconds);
}

/** A step's response time in words ("2 h"); "—" when the policy set none. */
export function responseTimeText(minutes: number | null | undefined): string {
  return minutes === null || minutes === undefined ? "—" : fmt.duration(minutes * 60);
}

/** Whether a wait went past its step's response time, as the engine judged it (from when the step opened). */
export function pastResponseTime(wait: { past_response_time: boolean }): boolean {
  return wait.past_response_time;
}

/** What was won as a share of the opening asks ("12.50%", "−3.00%"), exact as the engine sent it; "—" when none. */
export function wonPercent(value: string | null | undefined): string {
  return value === null || value === undefined ? "—" : `${fmt.amount(value)}%`;
}

/** One currency's figures as shown: every amount in that currency alone. */
export interface MoneyLine {
  currency: string;
  sessions: string;
  agreedSessions: string;
  agreed: string;
  opening: string;
  won: string;
  wonPercent: string;
}

/**
 * Each currency's figures, one line per currency in the engine's order. Nothing
 * is ever added across currencies: there is no total line, and each amount
 * carries its own code.
 */
export function moneyLines(figures: readonly CurrencyFigures[]): MoneyLine[] {
  return figures.map((f) => ({
    currency: f.currency,
    sessions: fmt.count(f.sessions),
    agreedSessions: fmt.count(f.agreed_sessions),
    agreed: fmt.money(f.agreed_total, f.currency),
    opening: fmt.money(f.opening_total, f.currency),
    won: fmt.money(f.won, f.currency),
    wonPercent: wonPercent(f.won_percent),
  }));
}

/**
 * One currency's money in a line: "540,000 USD agreed · won 60,000 USD (10.00%)" (no share when the engine
 * names none); "nothing agreed yet in USD" while no session in that currency is agreed.
 */
export function moneyLineText(line: MoneyLine): string {
  if (line.agreedSessions === "0") return `nothing agreed yet in ${line.currency}`;
  return `${line.agreed} agreed · won ${line.won}${line.wonPercent === "—" ? "" : ` (${line.wonPercent})`}`;
}

/** The names of the counterparties a row may be the same as, from the list; an id the list does not name stays an id. */
export function maybeSameNames(row: CounterpartyRow, rows: readonly CounterpartyRow[]): string[] {
  return row.maybe_same_as.map((id) => rows.find((r) => r.id === id)?.name ?? id);
}

/** A stable key for a figure, to mark the one whose sessions are open. */
export function figureKey(figure: DeskFigure): string {
  switch (figure.figure) {
    case "currency":
    case "agreed":
      return `${figure.figure}:${figure.currency}`;
    case "person":
      return `person:${figure.person}:${figure.role ?? ""}`;
    case "counterparty":
      return `counterparty:${figure.id}`;
    default:
      return figure.figure;
  }
}

/** What a figure's sessions are, as the list's heading says it (`name`: the counterparty's, where the figure is one). */
export function figureTitle(figure: DeskFigure, name?: string): string {
  switch (figure.figure) {
    case "all":
      return "Every session in the range";
    case "currency":
      return `Sessions with money in ${figure.currency}`;
    case "agreed":
      return `Sessions agreed in ${figure.currency}`;
    case "past_response_time":
      return "Sessions with a decision past its step's response time";
    case "person":
      return `Sessions decided by ${figure.person}${figure.role ? ` as ${figure.role}` : " (no role)"}`;
    case "breaches":
      return "Sessions where the organization's agent broke a decision";
    case "disputes":
      return "Disputed sessions";
    case "counterparty":
      return `Sessions with ${name ?? figure.id}`;
  }
}

/**
 * A figure a person opened: what the engine is asked for, the list's
 * heading and, on a counterparty's page, which of that counterparty's
 * sessions the figure counts (`keep`; the engine's figures there are the
 * counterparty's sessions as a whole).
 */
export interface FigureAsk {
  figure: DeskFigure;
  key: string;
  title: string;
  keep?: (row: SessionRow) => boolean;
}

/** Opens a figure of the desk: the engine's own figure, whole. */
export function deskAsk(figure: DeskFigure, name?: string): FigureAsk {
  return { figure, key: figureKey(figure), title: figureTitle(figure, name) };
}

/** A figure on a counterparty's page. */
export type PartyFigure =
  | { kind: "all" }
  | { kind: "currency"; currency: string }
  | { kind: "agreed"; currency: string }
  | { kind: "state"; protocol: string; state: SessionState }
  | { kind: "past_response_time" }
  | { kind: "action"; action: "decline" | "counter" }
  | { kind: "breaches" }
  | { kind: "disputes" };

function refKey(ref: SessionRef | SessionRow): string {
  return `${ref.host_id}\u0000${ref.session_id}`;
}

function keepOnly(refs: readonly SessionRef[]): (row: SessionRow) => boolean {
  const keys = new Set(refs.map(refKey));
  return (row) => keys.has(refKey(row));
}

/**
 * Opens a figure of a counterparty's page: the engine is asked for the
 * counterparty's sessions, and the page's own figures (its sessions with
 * what was won, its waits) say which of them the figure counts.
 */
export function partyAsk(page: CounterpartyPage, what: PartyFigure): FigureAsk {
  const figure: DeskFigure = { figure: "counterparty", id: page.row.id };
  const name = page.row.name;
  const base = { figure, key: `counterparty:${page.row.id}:${what.kind}` };
  switch (what.kind) {
    case "all":
      return { ...base, title: `Sessions with ${name}` };
    case "currency":
      return {
        ...base, key: `${base.key}:${what.currency}`, title: `Sessions with ${name} with money in ${what.currency}`,
        keep: keepOnly(page.sessions.filter((s) => s.currency === what.currency).map((s) => s.session)),
      };
    case "agreed":
      return {
        ...base, key: `${base.key}:${what.currency}`, title: `Sessions with ${name} agreed in ${what.currency}`,
        keep: keepOnly(page.sessions.filter((s) => s.currency === what.currency && s.agreed !== null).map((s) => s.session)),
      };
    case "state":
      return {
        ...base, key: `${base.key}:${what.protocol}:${what.state}`, title: `Sessions with ${name}: ${what.protocol}, ${what.state}`,
        keep: keepOnly(page.sessions.filter((s) => s.protocol === what.protocol && s.state === what.state).map((s) => s.session)),
      };
    case "past_response_time":
      return {
        ...base, title: `Sessions with ${name} with a decision past its step's response time`,
        keep: keepOnly(page.waits.filter(pastResponseTime).map((w) => w.session)),
      };
    case "action":
      return {
        ...base, key: `${base.key}:${what.action}`,
        title: `Sessions with ${name} where we ${what.action === "decline" ? "declined" : "countered"}`,
        keep: keepOnly(page.waits.filter((w) => w.action === what.action).map((w) => w.session)),
      };
    case "breaches":
      return { ...base, title: `Sessions with ${name} where the organization's agent broke a decision`, keep: (row) => row.breaches > 0 };
    case "disputes":
      return { ...base, title: `Disputed sessions with ${name}`, keep: (row) => row.verification === "disputed" };
  }
}

/** The audit pack form as the inputs hold it. */
export interface AuditPackForm {
  from: string;
  to: string;
  /** `""` for any action, else approve, decline or counter. */
  action: string;
  minTotal: string;
  currency: string;
  protocol: string;
  counterparty: string;
}

/**
 * The query an audit pack form asks for: empty fields left out; an amount
 * written with grouping commas ("100,000") sent as the plain decimal, anything
 * else sent as typed so the engine refuses it in its own words; a currency in
 * capitals. The engine checks it all (a minimum amount needs its currency).
 */
export function auditPackQuery(form: AuditPackForm): AuditPackQuery {
  const from = form.from.trim();
  const to = form.to.trim();
  const min = form.minTotal.trim();
  const currency = form.currency.trim().toUpperCase();
  const counterparty = form.counterparty.trim();
  return {
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(form.action ? { action: form.action } : {}),
    ...(min ? { min_total: typedAmount(min) ?? min } : {}),
    ...(currency ? { currency } : {}),
    ...(form.protocol ? { protocol: form.protocol } : {}),
    ...(counterparty ? { counterparty } : {}),
  };
}

/** The command that checks an audit pack offline, its folder quoted for a shell when it needs to be. */
export function verifyCommand(path: string): string {
  const quoted = /^[A-Za-z0-9_\/.:@%+=,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
  return `countersign-verify pack ${quoted}`;
}

/** The audit pack field an engine refusal names first ("currency must be …" → "currency"), to mark it; null when none. */
export function refusedField(message: string): keyof AuditPackQuery | null {
  const first = /^([a-z_]+)\b/.exec(message.trim())?.[1];
  const fields: (keyof AuditPackQuery)[] = ["from", "to", "action", "min_total", "currency", "protocol", "counterparty"];
  return fields.find((f) => f === first) ?? null;
}
