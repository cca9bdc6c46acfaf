/** Words for a decision's chain of approvals (the organization's policy of authority, docs/authority.md). */
import type { ApprovalChain, ChainPart, ChainStep, DecisionChain, HostApproval } from "../backend";
import * as fmt from "./format";

/** One step as a line: "Step 2 · finance: 1 of 1 — approved by fay@…" or "… waiting on fay@…, frank@…". */
export interface StepLine {
  number: number;
  text: string;
  state: "met" | "current" | "later";
}

/**
 * Who approved a part, each as they approved: "ann@…", or a stand-in with whom they stood in for,
 * "grace@… for fay@…".
 */
export function approvers(part: ChainPart): string[] {
  // A record kept before stand-ins existed has none.
  const stood = [...(part.stood_in ?? [])];
  return part.approved_by.map((email) => {
    const at = stood.findIndex((s) => s.by === email);
    if (at < 0) return email;
    const [s] = stood.splice(at, 1);
    return `${email} for ${s.for_person}`;
  });
}

function partText(part: ChainPart, current: boolean): string {
  const count = `${part.approved_by.length} of ${part.required}`;
  const by = part.approved_by.length > 0 ? ` — approved by ${approvers(part).join(", ")}` : "";
  const waiting = current && part.may_act.length > 0 && part.approved_by.length < part.required
    ? `; may approve: ${part.may_act.join(", ")}` : "";
  return `${part.role} ${count}${by}${waiting}`;
}

/** Each step in order, with who approved and who may still act at the current one. */
export function stepLines(chain: ApprovalChain): StepLine[] {
  return chain.steps.map((step: ChainStep) => {
    const current = chain.current_step === step.number;
    const parts = step.parts.map((p) => partText(p, current)).join(" and ");
    const within = step.escalated && step.escalate_to
      ? ` (past its ${duration(step.respond_within_minutes ?? 0)}: offered to ${step.escalate_to} too)`
      : step.respond_within_minutes ? ` (within ${duration(step.respond_within_minutes)}` +
        (current && step.due_at ? `, due ${fmt.absolute(step.due_at)}` : "") +
        (step.escalate_to ? `, then also ${step.escalate_to})` : ")") : "";
    return {
      number: step.number,
      text: `Step ${step.number} · ${parts}${within}`,
      state: step.met ? "met" : current ? "current" : "later",
    };
  });
}

function duration(minutes: number): string {
  if (minutes % 1440 === 0) return `${minutes / 1440} d`;
  if (minutes % 60 === 0) return `${minutes / 60} h`;
  return `${minutes} min`;
}

/** The roles the current step still waits on. */
export function waitingOn(chain: ApprovalChain): string[] {
  const step = chain.steps.find((s) => s.number === chain.current_step);
  if (!step) return [];
  const roles = step.parts.filter((p) => p.approved_by.length < p.required).map((p) => p.role);
  // Past its time, the step is offered to its escalation role too.
  if (step.escalated && step.escalate_to && !roles.includes(step.escalate_to)) roles.push(step.escalate_to);
  return roles;
}

/**
 * How this person decides when they stand in for someone: "as finance, for fay@… (stand-in)";
 * null when they decide in their own right.
 */
export function standInPhrase(chain: Pick<ApprovalChain, "your_role" | "your_stand_in">): string | null {
  const standIn = chain.your_stand_in;
  if (!standIn) return null;
  return chain.your_role ? `as ${chain.your_role}, for ${standIn.for_person} (stand-in)` : `for ${standIn.for_person} (stand-in)`;
}

/** Whose turn it is, in one sentence for this person. */
export function turnSentence(chain: ApprovalChain): string {
  if (chain.current_step === null) return "Every step of its chain is met.";
  const roles = waitingOn(chain).join(" and ");
  const step = chain.steps.find((s) => s.number === chain.current_step);
  // Standing in, the role is the holder's, not this person's: the sentence says for whom.
  const standIn = standInPhrase(chain);
  if (chain.you_may_approve && step?.escalated && step.escalate_to && chain.your_role === step.escalate_to) {
    return standIn
      ? `Your turn: step ${chain.current_step} is past its time and offered to ${step.escalate_to} too; you decide ${standIn}.`
      : `Your turn: step ${chain.current_step} is past its time and offered to ${step.escalate_to} too, which you hold.`;
  }
  if (chain.you_may_approve) {
    return standIn
      ? `Your turn: step ${chain.current_step} waits on ${roles}; you decide ${standIn}.`
      : `Your turn: step ${chain.current_step} waits on ${roles}, which you hold.`;
  }
  if (chain.you_may_decide) {
    return `Step ${chain.current_step} waits on ${roles}; your approval already counts on this request, but you may still decline or counter`
      + (standIn ? ` ${standIn}.` : ".");
  }
  return `Not yours to decide now: step ${chain.current_step} waits on ${roles}, and you hold none of those roles.`;
}

/** "Above 10,000 USD: rule 2 (policy version 3)", or the old threshold's words. */
export function whyLine(chain: ApprovalChain): string {
  return chain.policy_version === null ? chain.reason : `${chain.reason} (policy version ${chain.policy_version})`;
}

/**
 * Worth a place on screen: a chain the organization's policy of authority gave, or an old-threshold chain that
 * needs more than one approval. One approval by anyone, as every org without a policy decides, says nothing new.
 */
export function worthShowing(chain: ApprovalChain): boolean {
  return chain.policy_version !== null || chain.steps.length > 1 || chain.steps.some((s) => s.parts.some((p) => p.required > 1));
}

/** An inbox row's note for a decision waiting on others: "waits on finance", or on another approver. */
export function waitsOnText(chain: ApprovalChain | null): string {
  const roles = chain ? waitingOn(chain) : [];
  return roles.length > 0 ? `waits on ${roles.join(" and ")}` : "waits on another approver";
}

/**
 * One approval as the host recorded it, for History: "Step 2 · finance · grace@… for fay@… (stand-in)"; a gate
 * receipt's, which names no step: "finance · grace@…"; one from before routing: the person alone.
 */
export function hostApprovalLine(a: HostApproval): string {
  const by = a.for_person ? `${a.approved_by} for ${a.for_person} (stand-in)` : a.approved_by;
  const place = [a.step !== null ? `Step ${a.step}` : null, a.role].filter((x): x is string => Boolean(x));
  return [...place, by].join(" · ");
}

/** Why the recorded approvals' request went where it did: "Above 10,000 USD: rule 2 (policy version 3)", or null. */
export function hostApprovalsWhy(approvals: readonly HostApproval[]): string | null {
  const routed = approvals.find((a) => a.reason !== null);
  if (!routed || routed.reason === null) return null;
  return routed.policy_version === null ? routed.reason : `${routed.reason} (policy version ${routed.policy_version})`;
}

/**
 * A decision's place on its chain, for History: "As finance at step 2 · Above 10,000 USD: rule 2 (policy version 3) ·
 * before it: step 1 buyer ann@fabrikam.example". Null for a one-approval chain of the old threshold (nothing to say).
 */
export function decisionChainLine(c: DecisionChain): string | null {
  const plain = c.policy_version === null && c.steps.length <= 1 && c.steps.every((s) => s.parts.every((p) => p.required <= 1));
  if (plain) return null;
  const standIn = c.stand_in ? ` for ${c.stand_in.for_person} (stand-in)` : "";
  const place = c.role && c.step !== null ? `As ${c.role}${standIn} at step ${c.step}`
    : standIn ? `On its chain,${standIn}` : "On its chain";
  const why = c.policy_version === null ? c.reason : `${c.reason} (policy version ${c.policy_version})`;
  const before = c.steps.flatMap((s) => s.parts.filter((p) => p.approved_by.length > 0)
    .map((p) => `step ${s.number} ${p.role} ${approvers(p).join(", ")}`));
  return [place, why, ...(before.length > 0 ? [`before it: ${before.join("; ")}`] : [])].join(" · ");
}
