/** ANP words for an offer. */
import type { InboxItem } from "../../backend";

/** "offer", "counter-offer", or "draft counter-offer" (the buyer agent's, not sent yet). */
export function anpNoun(item: Pick<InboxItem, "kind" | "is_draft">): string {
  if (item.is_draft) return "draft counter-offer";
  return item.kind === "counter_offer" ? "counter-offer" : "offer";
}
