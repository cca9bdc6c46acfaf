/** The decide panel's modes and the decline presets. */

/** Which decision form is open. */
export type DecideMode = "none" | "approve" | "decline" | "counter";

/** Common decline reasons; the person may add words to any of them. */
export const DECLINE_PRESETS: readonly string[] = [
  "Price is above our budget",
  "Terms are not acceptable",
  "Scope does not match what we asked for",
  "Vendor is not approved for this purchase",
  "Other",
];

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
