/** Words for what became of a proposal, and for the toast a decision leaves. */
import type { AppendedEvent, DecideRequest, DecisionResult, ProposalDecision } from "../backend";
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

/** One word for the header: "Approved", "Declined", "Countered", or "No longer pending". */
export function decidedWord(decision: ProposalDecision): string {
  return decision.action ? ACTED[decision.action] : "No longer pending";
}

/** "Approved: accepted on the log.", "Your approval is recorded…", "Approved elsewhere…". */
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

/** The toast after a decision: what was sent, to whom, and what the log holds now. */
export function toastText(action: DecideRequest["action"], counterparty: string, result: DecisionResult): string {
  switch (result.outcome) {
    case "appended":
      return `${SENT[action]} to ${counterparty}${result.appended ? `: ${eventWords(result.appended)}.` : "."}`;
    case "awaiting_approvals":
      return `Your approval for ${counterparty} is recorded; another approver must approve too.`;
    case "held":
      return `Your ${action === "counter" ? "counter-offer" : action} for ${counterparty} is held by screening: nothing was sent.`;
  }
}
