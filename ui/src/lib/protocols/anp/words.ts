/** ANP words for an offer. */
import type { InboxItem } from "../../backend";

/** "offer", "counter-offer", or "draft counter-offer" (the buyer agent's, not sent yet). */
export function anpNoun(item: Pick<InboxItem, "kind" | "is_draft">): string {
  if (item.is_draft) return "draft counter-offer";
  return item.kind === "counter_offer" ? "counter-offer" : "offer";
}

/** How an ANP session reads in history (see `SessionWords` in the registry). */
export const anpSession = {
  entry: "event",
  entries: "events",
  seriesTitle: "Offer totals in the order they were made",
  exportHint: "JSON: the hash-chained log under \"log\" (the document countersign-verify checks) and every decision as it was sent. CSV: one row per term of every message (the accept too) and per field of every decision you sent.",
  /** ANP event kinds as words. */
  kinds: {
    session_open: "Session opened",
    envelope: "Envelope",
    offer: "Offer",
    counter_offer: "Counter-offer",
    message: "Message",
    decline: "Decline",
    session_close: "Session closed",
    accept: "Accept",
  },
};
