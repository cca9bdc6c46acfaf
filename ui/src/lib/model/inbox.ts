/** Inbox ordering, counting and labels. */
import type { Gap, InboxItem, InboxPage, ProposalRef } from "../backend";
import { signOf } from "./money";
import * as fmt from "./format";

/** The page once `ref` was opened: its row is read and the unread count falls, before the engine says so. */
export function markOpened(page: InboxPage, ref: ProposalRef): InboxPage {
  const key = itemKey(ref);
  const opened = page.items.find((item) => item.unread && itemKey(item) === key);
  if (!opened) return page;
  return {
    items: page.items.map((item) => (item === opened ? { ...item, unread: false } : item)),
    total: page.total,
    unread: Math.max(0, page.unread - 1),
    waiting: page.waiting,
    expired: page.expired,
  };
}

/** The window title with the decisions waiting on the person, "(1,234) Countersign"; the shell writes the same (src-tauri/src/window.rs). */
export function windowTitle(waiting: number): string {
  return waiting > 0 ? `(${fmt.count(waiting)}) Countersign` : "Countersign";
}

/**
 * The pending decision `delta` away from the one open: its neighbour in the
 * list, or, once it left the list (it was just decided), the one that took
 * its place (the next) or the one before it; wrapping to the first. Null
 * when nothing else waits.
 */
export function neighbour(items: readonly InboxItem[], currentKey: string, openedIndex: number, delta: 1 | -1): InboxItem | null {
  const others = items.filter((item) => itemKey(item) !== currentKey);
  if (others.length === 0) return null;
  const here = items.findIndex((item) => itemKey(item) === currentKey);
  if (here >= 0) return items[here + delta] ?? (delta > 0 ? others[0] : others[others.length - 1]);
  const at = Math.max(0, openedIndex);
  if (delta > 0) return items[Math.min(at, items.length - 1)] ?? others[0];
  return items[at - 1] ?? others[others.length - 1];
}

/** "1 of 2 approvals". */
export function approvalsText(given: number, required: number): string {
  return `${fmt.count(given)} of ${fmt.count(required)} approval${required === 1 ? "" : "s"}`;
}

/** A stable key for one pending decision. */
export function itemKey(item: { host_id: string; session_id: string; event_hash: string }): string {
  return `${item.host_id}/${item.session_id}/${item.event_hash}`;
}

/** Moves a selection by `delta`, staying inside a list of `length` (or -1 when empty). */
export function moveSelection(index: number, delta: number, length: number): number {
  if (length === 0) return -1;
  return Math.min(length - 1, Math.max(0, index + delta));
}

type Positioned = Pick<InboxItem, "seq" | "is_draft">;

/** "counter-offer · seq 7", or "counter-offer · draft, not sent" (a draft has no seq on the record yet); `noun` is the kind's word. */
export function inboxPosition(item: Positioned, noun: string): string {
  const kind = noun.replace(/^draft /, "");
  return item.is_draft ? `${kind} · draft, not sent` : `${kind} · seq ${fmt.count(item.seq)}`;
}

/** Who an actor is, in words: ANP's two sides by role, any other party by its id. */
function actorWords(actor: string): string {
  if (actor === "buyer") return "buyer";
  if (actor === "vendor_agent") return "vendor";
  return actor;
}

/** Where a proposal sits in its session: "seq 7, answering seq 5 (vendor)"; drafts are "not sent yet, answering …". */
export function answeringText(item: Positioned & { actor: string }, previous: { seq: number; actor: string } | null,
  sentAs: number | null = null): string {
  // A draft is not on the log until it is sent; once sent, it is the entry it became.
  const own = item.is_draft ? (sentAs !== null ? `sent as seq ${sentAs}` : "not sent yet") : `seq ${item.seq}`;
  if (!previous) return own;
  if (previous.actor === item.actor) return `${own}, compared with their previous seq ${previous.seq}`;
  return `${own}, answering seq ${previous.seq} (${actorWords(previous.actor)})`;
}

/** What a proposal's change is measured against: their own previous proposal, or the one it answers. */
export function changeAgainst(item: { actor: string }, previous: { seq: number; actor: string } | null): string {
  if (!previous) return "";
  return previous.actor === item.actor
    ? `since their previous offer (seq ${fmt.count(previous.seq)})`
    : `against seq ${fmt.count(previous.seq)} (${actorWords(previous.actor)})`;
}

/** The proposal view's heading before the counterparty's name: a draft is our agent's, addressed to them;
 * `preposition` is the kind's own ("from" an offer's sender, "with" for terms our agent would agree with them). */
export function proposalHeading(item: Positioned, noun: string, preposition = "from"): string {
  if (item.is_draft) return "Buyer agent's draft counter-offer to";
  return `${noun.charAt(0).toUpperCase()}${noun.slice(1)} ${preposition}`;
}

/** How far their proposal stands from our last counter: "36,000 USD (7.20%) above our last counter (seq 5)". */
export function gapText(gap: Gap): string {
  const sign = signOf(gap.change.absolute);
  const where = `our last counter (seq ${fmt.count(gap.seq)}, ${fmt.money(gap.ours.value, gap.ours.currency)})`;
  if (sign === 0) return `the same as ${where}`;
  const size = fmt.money(gap.change.absolute.replace(/^[+-]/, ""), gap.ours.currency);
  const percent = gap.change.percent === null ? "" : ` (${fmt.percent(gap.change.percent).replace(/^[+−-]/, "")})`;
  return `${size}${percent} ${sign > 0 ? "above" : "below"} ${where}`;
}

/** True where the inbox's decisions waiting on others begin (the engine lists them after those waiting on you). */
export function othersBegin(items: readonly InboxItem[], i: number): boolean {
  const item = items[i];
  return item !== undefined && !item.waits_on_you && (i === 0 || items[i - 1]?.waits_on_you === true);
}
