/** Concordia words for an offer and its parts. */
import type { InboxItem, OfferShape } from "../../backend";

/** "offer" (`negotiate.offer`) or "counter-offer" (`negotiate.counter`). */
export function concordiaNoun(item: Pick<InboxItem, "kind" | "is_draft">): string {
  return item.kind === "negotiate.counter" ? "counter-offer" : "offer";
}

/** What each shape of §6 is, in words. */
export function shapeWords(shape: OfferShape): string {
  switch (shape) {
    case "basic": return "Terms";
    case "partial": return "Terms, some left open";
    case "conditional": return "Conditional: if these terms, then those";
    case "bundle": return "Bundles: alternatives to choose from";
  }
}

/** How a Concordia session reads in history (see `SessionWords` in the registry). */
export const concordiaSession = {
  entry: "message",
  entries: "messages",
  seriesTitle: "Prices offered, in the order they were made",
  exportHint: "JSON: the signed transcript with every party's key and the ApprovalReceipts you signed; countersign-verify checks the file as it is (links, signatures, the state machine, each receipt against the offer it names). CSV: one row per term of every message (the accept too) and per field of every decision you sent.",
  /** Concordia message types as words. */
  kinds: {
    "negotiate.open": "Open",
    "negotiate.accept_session": "Session accepted",
    "negotiate.decline_session": "Session declined",
    "negotiate.offer": "Offer",
    "negotiate.counter": "Counter-offer",
    "negotiate.accept": "Accept",
    "negotiate.reject": "Reject",
    "negotiate.withdraw": "Withdraw",
    "negotiate.commit": "Commit",
    "negotiate.inquire": "Inquiry",
    "negotiate.constrain": "Constraint",
    "negotiate.signal": "Signal",
    "negotiate.propose_mediator": "Mediator proposed",
    "negotiate.resolve": "Resolve",
  },
};
