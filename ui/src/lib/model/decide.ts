/** The decide panel's modes and the decline reason. (The reasons offered are the engine's, per protocol.) */
import type { DecideAction, ProposalView } from "../backend";

/** Which decision form is open. */
export type DecideMode = "none" | "approve" | "decline" | "counter";


/**
 * The reason sent with a decline: the preset, then the person's words. Empty
 * when nothing meaningful was given ("Other" alone is not a reason).
 */
export function declineReason(preset: string, details: string): string {
  const words = details.trim();
  const base = preset === "Other" ? "" : preset.trim();
  if (base && words) return `${base}: ${words}`;
  return base || words;
}

/**
 * The decisions a person can make on a proposal now: what its capabilities
 * offer while it stands, and once it expired (by the engine's clock or while
 * on screen) only what its protocol still takes after expiry. A key for any
 * other decision opens nothing, so it leaves no hidden mode behind.
 */
export function availableActions(view: ProposalView, now: number): DecideAction[] {
  const expired = view.expired || Date.parse(view.item.expires_at) <= now;
  return expired ? view.capabilities.after_expiry : view.capabilities.actions;
}
