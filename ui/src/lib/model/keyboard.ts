/** The keyboard map: one place decides what a key press means. */

/** What a shortcut asks the app to do. */
export type Shortcut =
  | "next" | "previous" | "down" | "up" | "open" | "approve" | "decline" | "counter"
  | "search" | "help" | "back";

/** The parts of a KeyboardEvent the map reads (so tests can pass plain objects). */
export interface KeyPress {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
  target?: EventTarget | null;
}

/** The shortcuts, for the help overlay. */
export const SHORTCUTS: readonly { keys: string; action: string }[] = [
  { keys: "j / k", action: "Move down / up the list" },
  { keys: "j / n, k", action: "In an offer: the next, previous pending decision" },
  { keys: "Enter", action: "Open the selected item" },
  { keys: "a", action: "Approve (asks you to confirm: Enter or a again sends)" },
  { keys: "d", action: "Decline (asks for a reason; Enter then asks you to confirm, Enter sends)" },
  { keys: "c", action: "Counter-offer (Enter checks it; Send asks you to confirm, Enter sends)" },
  { keys: "/", action: "Search the history" },
  { keys: "?", action: "Show or hide this help" },
  { keys: "Escape", action: "Close, or go back" },
];

const KEYS: Record<string, Shortcut> = {
  // Arrows move in lists only; in an offer they scroll, where j/n/k go to another decision.
  j: "next", n: "next", ArrowDown: "down", k: "previous", ArrowUp: "up",
  Enter: "open", a: "approve", d: "decline", c: "counter",
  "/": "search", "?": "help", Escape: "back",
};

/** True when the key press lands where a person types text. */
function isTyping(target: EventTarget | null | undefined): boolean {
  if (!target || typeof (target as Element).tagName !== "string") return false;
  const element = target as HTMLElement;
  const tag = element.tagName.toLowerCase();
  return tag === "input" || tag === "textarea" || tag === "select" || element.isContentEditable === true;
}

/** True when Enter on the target already activates it natively. */
function activatesOnEnter(target: EventTarget | null | undefined): boolean {
  if (!target || typeof (target as Element).tagName !== "string") return false;
  const tag = (target as HTMLElement).tagName.toLowerCase();
  return tag === "button" || tag === "a" || tag === "summary";
}

/**
 * The shortcut a key press means, or null. Letters never fire while typing in
 * a field (only Escape does), and modified keys belong to the system.
 */
export function shortcutFor(press: KeyPress): Shortcut | null {
  if (press.ctrlKey || press.metaKey || press.altKey) return null;
  const shortcut = KEYS[press.key];
  if (!shortcut) return null;
  if (isTyping(press.target)) return shortcut === "back" ? "back" : null;
  if (shortcut === "open" && activatesOnEnter(press.target)) return null;
  return shortcut;
}

/** A list reads the arrows as j and k. */
export function inList(shortcut: Shortcut): Shortcut {
  if (shortcut === "down") return "next";
  if (shortcut === "up") return "previous";
  return shortcut;
}
