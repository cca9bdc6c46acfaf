/** ANEX words for an ask and its parts. */
import type { AnexItemView, InboxItem } from "../../backend";

/** "data request" (a CFP) or "counter-proposal" (the requester's PROPOSE). */
export function anexNoun(item: Pick<InboxItem, "kind" | "is_draft">): string {
  return item.kind === "PROPOSE" ? "counter-proposal" : "data request";
}

/** What the owner's policy says of one item, in words. */
export function verdictWords(item: AnexItemView): string {
  if (item.within_policy === null) return "not known (the ask is no longer pending)";
  if (!item.within_policy) return "beyond your policy";
  return item.adds.length > 0 ? "within your policy, with more promises" : "within your policy";
}

/** A list of names for a sentence: "a, b and c"; "none" for none. */
export function listWords(names: string[]): string {
  if (names.length === 0) return "none";
  if (names.length === 1) return names[0];
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** An ANEX conversation's words in history: its record is the conversation's messages, unsigned. */
export const anexSession = {
  entry: "message",
  entries: "messages",
  seriesTitle: "What was agreed",
  exportHint: "JSON: the conversation's messages as the host keeps them and every decision (its ApprovalReceipt over the terms record) as it was sent. CSV: one row per term of every message (the accept too) and per field of every decision you sent.",
  unsigned: true,
  /** ANEX performatives as words. */
  kinds: {
    CFP: "Call for proposals",
    PROPOSE: "Proposal",
    "ACCEPT-PROPOSAL": "Proposal accepted",
    "REJECT-PROPOSAL": "Proposal rejected",
    AGREE: "Agree",
    REFUSE: "Refuse",
    INFORM: "Inform",
    REQUEST: "Request",
    "QUERY-IF": "Query",
    CANCEL: "Cancel",
    FAILURE: "Failure",
    "NOT-UNDERSTOOD": "Not understood",
  },
};
