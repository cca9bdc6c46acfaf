/** Words for what became of a proposal, and for the toast a decision leaves. */
import type { AppendedEvent, DecideRequest, DecisionRecipient, DecisionResult, ProposalDecision } from "../backend";
import * as fmt from "./format";

/** The summary's first line and its tone. */
export interface Headline {
  text: string;
  tone: "success" | "waiting" | "held" | "refused";
}

const ACTED: Record<NonNullable<ProposalDecision["action"]>, string> = {
  approve: "Approved",
  decline: "Declined",
  counter: "Countered",
};

/** One word for the header: "Approved", "Declined", "Countered", "Expired", or "No longer pending". */
export function decidedWord(decision: ProposalDecision): string {
  if (decision.action) return ACTED[decision.action];
  return decision.outcome === "expired" ? "Expired" : "No longer pending";
}

/** A gate request the host says was decided at another console (or completed there after this one's approval). */
function decidedAtHost(decision: ProposalDecision): string {
  const here = decision.decision_id !== null;
  switch (decision.action) {
    case "approve":
      return here
        ? "Approved: another approver gave the last approval the policy needs; the host told the org's agent it may accept."
        : "Approved at another console: the host told the org's agent it may accept.";
    case "counter":
      return "Countered at another console: the host gave the org's agent terms to offer instead.";
    default:
      return here
        ? "Declined at another console after your decision: the host told the org's agent not to accept."
        : "Declined at another console: the host told the org's agent not to accept.";
  }
}

/** "Approved: accepted on the log.", "Your approval is recorded…", "Approved elsewhere…", "Declined at another console…", "Expired…". */
export function decisionHeadline(decision: ProposalDecision): Headline {
  const acted = decision.action ? ACTED[decision.action] : "";
  switch (decision.outcome) {
    case "appended":
      // An ANP decision is an event on the session's log; a gate decision
      // (Concordia) is a signed receipt the host records for the org's agent.
      return decision.appended
        ? { tone: "success", text: `${acted} from this console: the host appended it to the session log.` }
        : { tone: "success", text: `${acted} from this console: the host recorded your signed decision for the agent.` };
    case "awaiting_approvals":
      return { tone: "waiting", text: "Your approval is recorded; the host waits for another approver before it accepts." };
    case "held":
      return { tone: "held", text: `${acted}, but held by the host's screening: nothing reached the other side.` };
    case "pending":
      return { tone: "waiting", text: `${acted} here, not yet confirmed by the host: it is kept and can be sent again safely.` };
    case "answered":
      return { tone: "success", text: `${acted} elsewhere: the session log shows the answer.` };
    case "decided":
      return { tone: "success", text: decidedAtHost(decision) };
    case "expired":
      return decision.decision_id !== null
        ? { tone: "held", text: "Expired before every approval it needs was given: the org's agent must not accept." }
        : { tone: "held", text: "Expired: nobody decided in time, so the org's agent must not accept." };
    case "withdrawn":
      return { tone: "held", text: "No longer waiting for a decision." };
    case "refused":
      return { tone: "refused", text: `${acted} here, but the host refused it: nothing reached the other side.` };
  }
}

/** An appended entry's kind in words: ANP's event kinds, a Concordia message type without its prefix. */
function kindWords(kind: string): string {
  return kind.replace(/^negotiate\./, "").replace(/_/g, "-");
}

/** "accept appended as seq 6, verified" / "…, not yet verified by this console". */
export function eventWords(event: AppendedEvent): string {
  const state = event.verified ? "verified" : "not yet verified by this console";
  return `${kindWords(event.kind)} appended as seq ${fmt.count(event.seq)}, ${state}`;
}

const SENT: Record<DecideRequest["action"], string> = {
  approve: "Approval sent",
  decline: "Decline sent",
  counter: "Counter-offer sent",
};

/** What our own agent does with each decision it receives about the counterparty's proposal. */
const AGENT_DOES: Record<DecideRequest["action"], (counterparty: string) => string> = {
  approve: (who) => `it may now accept the offer from ${who}`,
  decline: (who) => `it tells ${who} no`,
  counter: (who) => `it offers your terms to ${who}`,
};

/**
 * The toast after a decision: what was sent, to whom (the counterparty, or our
 * own agent, which then acts: the engine's `decision_goes_to`), and what the log holds now.
 */
export function toastText(action: DecideRequest["action"], counterparty: string, result: DecisionResult,
  goesTo: DecisionRecipient = "counterparty"): string {
  switch (result.outcome) {
    case "appended":
      if (goesTo === "own_agent") return `${SENT[action]} to our agent: ${AGENT_DOES[action](counterparty)}.`;
      return `${SENT[action]} to ${counterparty}${result.appended ? `: ${eventWords(result.appended)}.` : "."}`;
    case "awaiting_approvals":
      return `Your approval for ${counterparty} is recorded; another approver must approve too.`;
    case "held":
      return `Your ${action === "counter" ? "counter-offer" : action} for ${counterparty} is held by screening: nothing was sent.`;
  }
}
