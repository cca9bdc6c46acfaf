/**
 * OANP's words for people: amounts from minor units, verdicts, check names,
 * inclusions. Every value passed in is the arbiter's (counterparty) text and
 * is only ever placed in text nodes.
 */
import type { OanpCheck, OanpInclusion, OanpMoney } from "../../backend";
import * as fmt from "../../model/format";

/** "419.00 USD" grouped for the locale; minor units said plainly when the currency's exponent is unknown. */
export function oanpMoney(money: OanpMoney | null): string {
  if (!money) return "—";
  if (money.amount) return fmt.money(money.amount.value, money.amount.currency);
  return `${money.amount_minor} minor units of ${money.currency}`;
}

const VERDICTS: Record<string, string> = {
  fair: "fair",
  unfair_to_buyer: "unfair to the buyer",
  unfair_to_merchant: "unfair to the merchant",
};

/** A verdict as people say it; an unknown one as the arbiter wrote it. */
export function verdictWords(verdict: string | null): string {
  if (verdict === null) return "—";
  return VERDICTS[verdict] ?? verdict;
}

const CHECKS: Record<string, string> = {
  header: "Header",
  key: "Embedded key",
  signature: "Signature",
  signer: "Signer",
  mode: "Mode",
  terms: "Terms",
  chain: "Session log",
};

/** A check's name for people. */
export function checkName(id: string): string {
  return CHECKS[id] ?? id;
}

/** `ok`, `fail` or `skip`: what a check's mark shows. */
export function checkState(check: OanpCheck): "ok" | "fail" | "skip" {
  if (check.skipped) return "skip";
  return check.ok ? "ok" : "fail";
}

/** "warranty (included)". */
export function inclusionWords(inclusion: OanpInclusion): string {
  return inclusion.value ? `${inclusion.kind} (${inclusion.value})` : inclusion.kind;
}

/** The inclusions in one line, or "none". */
export function inclusionsLine(inclusions: OanpInclusion[]): string {
  return inclusions.length === 0 ? "none" : inclusions.map(inclusionWords).join(", ");
}

/** "offer" (`offer.propose`) or "counter-offer" (`offer.counter`). */
export function oanpNoun(item: { kind: string; is_draft: boolean }): string {
  return item.kind === "offer.counter" ? "counter-offer" : "offer";
}

/** An OANP gate session's words in history: its record is the session's envelopes. */
export const oanpSession = {
  entry: "envelope",
  entries: "envelopes",
  seriesTitle: "Prices offered, in the order they were made",
  exportHint: "JSON: the session's envelopes as the gate keeps them, with the roles that sent them and the ApprovalReceipts you signed. CSV: one row per term of every message (the accept too) and per field of every decision you sent.",
  unsigned: true,
  /** OANP message types as words. */
  kinds: {
    "session.open": "Session opened",
    "session.ack": "Joined",
    "session.accept": "Session accepted",
    "offer.propose": "Offer",
    "offer.counter": "Counter-offer",
    "offer.accept": "Accept",
    "arbitration.evaluate": "Arbiter's verdict",
    "arbitration.reject": "Arbiter rejected",
    "session.agree": "Agreement",
    "session.close": "Session closed",
  },
};
