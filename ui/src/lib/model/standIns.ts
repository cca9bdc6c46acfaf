/**
 * Words and checks for stand-ins (delegations, docs/authority.md "Stand-ins"):
 * how a delegation reads in a list, and what the "Let a colleague stand in
 * for you" form refuses before anything is sent. The host checks everything
 * again and keeps every delegation; these checks only spare a round trip and
 * put the refusal beside the field that is wrong.
 */
import type { GiveStandIn, StandInView } from "../backend";
import * as fmt from "./format";

/** The longest span a delegation covers, in days (the host's limit). */
export const MAX_DAYS = 366;

/** What the form holds: a colleague's email, the roles ticked, and the two days as typed. */
export interface GiveForm {
  to: string;
  roles: string[];
  from: string;
  until: string;
}

/** The form's fields, as the refusal beside one names it. */
export type GiveField = "to" | "roles" | "from" | "until";

/** A refusal: its sentence and the field it belongs beside (null: the form as a whole). */
export interface GiveProblem {
  field: GiveField | null;
  message: string;
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
  "November", "December"];
const SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Why `text` is not a day written `YYYY-MM-DD` that the calendar has, or null when it is one. */
export function dayProblem(text: string, label: string, example: string): string | null {
  const match = SHAPE.exec(text);
  if (!match) return `${label} must be a day written YYYY-MM-DD, such as ${example}; got ${JSON.stringify(text)}.`;
  const [year, month, date] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12) return `${label} (${text}) is not a day of the calendar: months run from 01 to 12.`;
  const last = daysInMonth(year, month);
  if (date < 1 || date > last) return `${label} (${text}) is not a day of the calendar: ${MONTHS[month - 1]} ${year} has ${last} days.`;
  return null;
}

/** Days from `from` to `until`, both counted (both real `YYYY-MM-DD` days). */
export function spanDays(from: string, until: string): number {
  const at = (ymd: string) => Date.UTC(Number(ymd.slice(0, 4)), Number(ymd.slice(5, 7)) - 1, Number(ymd.slice(8, 10)));
  return Math.round((at(until) - at(from)) / 86_400_000) + 1;
}

/**
 * The first thing wrong with the form, in the order the fields stand, or null when it may be sent:
 * a colleague, at least one role, both days real, Until not before From, From not before `today`
 * (in `zone`, where the days are read), at most a year.
 */
export function checkGive(form: GiveForm, today: string, zone: string): GiveProblem | null {
  if (form.to.trim() === "") return { field: "to", message: "Choose who stands in for you." };
  if (form.roles.length === 0) return { field: "roles", message: "Choose at least one of your roles to hand over." };
  const from = form.from.trim();
  const until = form.until.trim();
  const example = SHAPE.test(today) ? today : "2026-12-24";
  const fromWrong = dayProblem(from, "From", example);
  if (fromWrong) return { field: "from", message: fromWrong };
  const untilWrong = dayProblem(until, "Until", example);
  if (untilWrong) return { field: "until", message: untilWrong };
  if (until < from) {
    return { field: "until", message: `Until (${until}) is before From (${from}): the last day comes on or after the first.` };
  }
  if (SHAPE.test(today) && from < today) {
    return { field: "from", message: `From (${from}) is before today in ${zone} (${today}): a stand-in starts today or later.` };
  }
  const days = spanDays(from, until);
  if (days > MAX_DAYS) {
    return { field: "until", message: `From ${from} to ${until} is ${days} days; a stand-in covers at most ${MAX_DAYS}.` };
  }
  return null;
}

/** What `give_stand_in` is sent for a form that passed `checkGive`: the roles in the order the host lists them. */
export function giveRequest(hostId: string, form: GiveForm, myRoles: readonly string[]): GiveStandIn {
  return {
    host_id: hostId,
    to: form.to.trim(),
    roles: myRoles.filter((role) => form.roles.includes(role)),
    from_date: form.from.trim(),
    to_date: form.until.trim(),
  };
}

/**
 * The field a refusal from the engine or the host speaks of, read from how it starts
 * ("roles[0]: you do not hold …", "from_date (2026-12-06) is before today …", "Until (…) is before From …"),
 * or null when it names none.
 */
export function refusalField(message: string): GiveField | null {
  const text = message.replace(/^The host refused:\s*/, "");
  const named = /^(to_date|from_date|roles|to|From|Until|Choose who|Choose at least)(?![A-Za-z_])/.exec(text)?.[1];
  switch (named) {
    case "to": case "Choose who": return "to";
    case "roles": case "Choose at least": return "roles";
    case "from_date": case "From": return "from";
    case "to_date": case "Until": return "until";
    default: return null;
  }
}

/** "Grace (grace@fabrikam.example)", or the email alone when the host has no name. */
export function person(name: string, email: string): string {
  return name.trim() && name.trim() !== email ? `${name.trim()} (${email})` : email;
}

/** Where a delegation stands, in words: "scheduled", "in force", "ended", "revoked by fay@…" ("by you" when `me` revoked it). */
export function stateWords(standIn: StandInView, me?: string): string {
  switch (standIn.state) {
    case "scheduled": return "scheduled";
    case "in_force": return "in force";
    case "ended": return "ended";
    case "revoked":
      if (!standIn.revoked_by) return "revoked";
      return me && standIn.revoked_by.toLowerCase() === me.toLowerCase() ? "revoked by you" : `revoked by ${standIn.revoked_by}`;
    default: return standIn.state;
  }
}

/** "Thu 10 Dec – Fri 11 Dec (Europe/Berlin)": the days in the delegator's zone, both counted. */
export function daysText(standIn: StandInView, today?: string): string {
  const first = fmt.day(standIn.from_date, today);
  const span = standIn.from_date === standIn.to_date ? first : `${first} – ${fmt.day(standIn.to_date, today)}`;
  return `${span} (${standIn.zone})`;
}

/**
 * One delegation in a list. Given by the person it names who stands in, received it names for whom:
 * "Grace (grace@…) as finance, Thu 10 Dec – Fri 11 Dec (Europe/Berlin) · in force".
 */
export function standInLine(standIn: StandInView, side: "given" | "received", today?: string, me?: string): string {
  const who = side === "given" ? person(standIn.to_name, standIn.to) : person(standIn.from_name, standIn.from);
  return `${who} as ${standIn.roles.join(" and ")}, ${daysText(standIn, today)} · ${stateWords(standIn, me)}`;
}

/** True while a delegation can still be ended (taken back or given up): scheduled or in force. */
export function mayEnd(standIn: StandInView): boolean {
  return standIn.state === "scheduled" || standIn.state === "in_force";
}
