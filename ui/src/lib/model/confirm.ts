/**
 * What every binding decision's confirmation says before anything is sent:
 * to whom the decision goes, and whether it binds the organization. One
 * sentence per proposal kind and action, data beside the protocols' own
 * views (the engine's capabilities say which actions exist at all).
 */
import type { DecideRequest, PlainTermsView, ProposalView } from "../backend";

/** The confirmation's words for one decision. */
export interface ConfirmWords {
  /** "Confirm approval", "Confirm decline", "Send counter-offer". */
  button: string;
  /** Who receives it, and how. */
  to: string;
  /** Whether it binds the organization, in a sentence. */
  binds: string;
  /** True when sending it binds the organization at once. */
  bindsNow: boolean;
}

type Action = DecideRequest["action"];

const BUTTON: Record<Action, string> = {
  approve: "Confirm approval",
  decline: "Confirm decline",
  counter: "Confirm counter",
};

/** The confirmation's words for `action` on `view`. */
export function confirmWords(view: ProposalView, action: Action): ConfirmWords {
  const item = view.item;
  const who = item.counterparty.organization ?? item.counterparty.name;
  const later = `Does not bind the organization now; binds it if ${who} accepts it.`;
  const never = "Does not bind the organization.";
  const button = BUTTON[action];
  if (item.is_draft && action === "approve") {
    return { button, to: `To ${who}: our agent's draft, sent as it stands.`, binds: later, bindsNow: false };
  }
  const bound = { binds: "Binds the organization to these terms.", bindsNow: true };
  switch (item.proposal_kind) {
    case "anp_offer":
      return action === "approve"
        ? { button, to: `To ${who}, on the session's log: an accept carrying your approval.`, ...bound }
        : action === "decline"
          ? { button, to: `To ${who}, on the session's log: a decline with your reason.`, binds: never, bindsNow: false }
          : { button, to: `To ${who}, on the session's log: your counter-offer.`, binds: later, bindsNow: false };
    case "anex_ask":
      return action === "approve"
        ? { button, to: `To ${who}, through our host: their terms, accepted.`, binds: "Binds the organization to share the accepted items under these promises.", bindsNow: true }
        : action === "decline"
          ? { button, to: `To ${who}, through our host: a refusal with your reason.`, binds: never, bindsNow: false }
          : { button, to: `To ${who}, through our host: your terms instead of theirs.`, binds: later, bindsNow: false };
    case "plain_terms": {
      // Plain terms: our own agent asked; no protocol carries the decision to the counterparty.
      const other = (view.detail as PlainTermsView).terms.counterparty.name;
      return action === "approve"
        ? { button, to: `To our agent, which may then commit the organization to exactly these terms with ${other}.`, ...bound }
        : action === "decline"
          ? { button, to: "To our agent, with your reason: it must not commit the organization to these terms.", binds: never, bindsNow: false }
          : { button, to: "To our agent, with your reason: the terms you would approve instead; it must not commit to its own, and may ask again with yours.",
            binds: never, bindsNow: false };
    }
    default:
      // Concordia and OANP: the decision goes to the org's own agent, which acts on it.
      return action === "approve"
        ? { button, to: `To our agent, which then accepts ${who}'s offer.`, ...bound }
        : action === "decline"
          ? { button, to: `To our agent, which tells ${who} no, with your reason.`, binds: never, bindsNow: false }
          : { button, to: `To our agent, which sends ${who} your counter terms instead.`, binds: later, bindsNow: false };
  }
}
