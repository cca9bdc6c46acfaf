/** Inbox ordering, counting and labels. */
import type { InboxItem, InboxPage, OfferRef } from "../backend";

/** The page once `ref` was opened: its row is read and the unread count falls, before the engine says so. */
export function markOpened(page: InboxPage, ref: OfferRef): InboxPage {
  const key = itemKey(ref);
  const opened = page.items.find((item) => item.unread && itemKey(item) === key);
  if (!opened) return page;
  return {
    items: page.items.map((item) => (item === opened ? { ...item, unread: false } : item)),
    total: page.total,
    unread: Math.max(0, page.unread - 1),
  };
}

/** The window title; the shell mirrors the count in the tray. */
export function windowTitle(unread: number): string {
  return unread > 0 ? `(${unread}) Countersign` : "Countersign";
}

/** "1 of 2 approvals". */
export function approvalsText(given: number, required: number): string {
  return `${given} of ${required} approval${required === 1 ? "" : "s"}`;
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

type Positioned = Pick<InboxItem, "kind" | "seq" | "is_draft">;

/** "counter-offer · seq 7", or "counter-offer · draft, not sent" (a draft has no seq on the log yet). */
export function inboxPosition(item: Positioned): string {
  const kind = item.kind === "counter_offer" ? "counter-offer" : "offer";
  return item.is_draft ? `${kind} · draft, not sent` : `${kind} · seq ${item.seq}`;
}

/** Where an offer sits in its session: "seq 7, answering seq 5 (vendor)"; drafts are "not sent yet, answering …". */
export function answeringText(item: Positioned, previous: { seq: number; actor: string } | null): string {
  const own = item.is_draft ? "not sent yet" : `seq ${item.seq}`;
  if (!previous) return own;
  return `${own}, answering seq ${previous.seq} (${previous.actor === "buyer" ? "buyer" : "vendor"})`;
}

/** The offer view's heading before the vendor's name: a draft is the buyer agent's, addressed to the vendor. */
export function offerHeading(item: Positioned): string {
  if (item.is_draft) return "Buyer agent's draft counter-offer to";
  return item.kind === "counter_offer" ? "Counter-offer from" : "Offer from";
}
