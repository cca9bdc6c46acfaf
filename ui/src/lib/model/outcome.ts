/** What the host did with a decision, told plainly. */
import type { CommandError, DecideRequest, DecisionResult } from "../backend";

/** How a decision ended, for the outcome notice. */
export interface OutcomeNotice {
  tone: "success" | "waiting" | "held" | "refused";
  headline: string;
  detail: string;
}

const DONE: Record<DecideRequest["action"], string> = {
  approve: "Approved: the acceptance was appended to the session log.",
  decline: "Declined: the decline was appended to the session log.",
  counter: "Counter-offer sent: it was appended to the session log.",
};

/** The notice for a host's answer. */
export function describeOutcome(action: DecideRequest["action"], result: DecisionResult): OutcomeNotice {
  switch (result.outcome) {
    case "appended":
      return { tone: "success", headline: DONE[action], detail: result.detail };
    case "awaiting_approvals":
      return {
        tone: "waiting",
        headline: "Your approval is recorded. The host is waiting for another approver before it accepts.",
        detail: result.detail,
      };
    case "held":
      return {
        tone: "held",
        headline: "Held by screening: nothing was sent to the other side.",
        detail: result.detail,
      };
  }
}

/** The notice for a refusal, with the host's own sentence. */
export function describeRefusal(error: CommandError): OutcomeNotice {
  return { tone: "refused", headline: "Refused: nothing was sent.", detail: error.message };
}
