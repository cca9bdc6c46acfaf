/** The ANEX counter editor's draft: which asked items to keep, which promises to ask for. */
import type { AnexAskView, AnexTerms } from "../../backend";

/** One line of the editor. */
export interface Choice {
  name: string;
  keep: boolean;
}

/** The draft a counter starts from: every asked item kept, their promises and the policy's missing ones. */
export function draftOf(ask: AnexAskView): { items: Choice[]; promises: Choice[] } {
  return {
    items: ask.items.map((i) => ({ name: i.item, keep: true })),
    promises: [...ask.promises_offered, ...ask.promises_missing].map((p) => ({ name: p, keep: true })),
  };
}

/** The counter in ANEX's own form, `{access, promise}`: names without marks, added promises trimmed. */
export function counterOf(items: Choice[], promises: Choice[], extra: string): AnexTerms {
  const promise = promises.filter((p) => p.keep).map((p) => p.name);
  for (const line of extra.split("\n").map((l) => l.trim()).filter((l) => l !== "")) {
    if (!promise.includes(line)) promise.push(line);
  }
  return { access: items.filter((i) => i.keep).map((i) => i.name), promise };
}
