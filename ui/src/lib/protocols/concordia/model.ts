/**
 * Concordia offers as a person reads and edits them: an amount or a value
 * in words, and a counter's `terms` object built from what was typed
 * (amounts stay exact decimal text, never floats).
 */
import type { ConcordiaOffer, Term } from "../../backend";
import * as fmt from "../../model/format";
import { isDecimal } from "../../model/money";

/** A term's value for people: money grouped with its currency, anything else as sent. */
export function termText(term: Term): string {
  return term.amount ? fmt.money(term.amount.value, term.amount.currency) : term.value;
}

/** One editable term of a counter: its id, the text typed, and what it was. */
export interface TermDraft {
  id: string;
  text: string;
  currency: string | null;
  attributes: { name: string; value: string }[];
  /** The value was a JSON number (and stays one when the text is a plain decimal). */
  numeric: boolean;
}

/** The terms a counter starts from: the offer's own (basic and partial offers; others have none to edit). */
export function draftTerms(offer: ConcordiaOffer): TermDraft[] {
  return offer.terms.map((term) => ({
    id: term.id,
    text: term.amount ? term.amount.value : term.value,
    currency: term.amount?.currency ?? null,
    attributes: term.attributes.filter((a) => a.name !== "currency"),
    numeric: term.amount !== null || isDecimal(term.value),
  }));
}

/**
 * The `terms` object of a counter. Money goes as its exact decimal text with
 * its currency; a number as a JSON number only when the typed decimal is
 * exactly that number's text; anything else as typed.
 */
export function termsFromDraft(drafts: TermDraft[]): Record<string, unknown> {
  const terms: Record<string, unknown> = {};
  for (const draft of drafts) {
    const text = draft.text.trim();
    let value: unknown = text;
    if (draft.currency === null && draft.numeric && isDecimal(text) && String(Number(text)) === text) value = Number(text);
    const entry: Record<string, unknown> = { value };
    if (draft.currency !== null) entry.currency = draft.currency;
    for (const attribute of draft.attributes) entry[attribute.name] = attribute.value;
    terms[draft.id] = entry;
  }
  return terms;
}
