/**
 * The one label map: the wire's keys and enumerated values as words a
 * person reads ("payment_terms" → "Payment terms", "bind_with_human_approval"
 * → "binds, with a person's approval"). A key it does not know is written
 * with spaces for underscores, never dropped; the value beside it stays data.
 */

const KEYS: Record<string, string> = {
  accepted_terms: "Accepted terms",
  amount: "Amount",
  amount_minor: "Amount (minor units)",
  conditions: "Conditions",
  currency: "Currency",
  data: "Data",
  delivery_date: "Delivery date",
  description: "Description",
  expires_at: "Expires",
  human_contact: "Human contact",
  in_response_to: "In response to",
  inclusions: "Inclusions",
  line_items: "Line item",
  notes: "Notes",
  offer_authority: "Offer authority",
  offer_id: "Offer id",
  payment_terms: "Payment terms",
  price: "Price",
  promise: "Promise",
  promises: "Promise",
  quantity: "Quantity",
  sku: "SKU",
  term_months: "Term (months)",
  terms: "Terms",
  unit: "Unit",
  unit_price: "Unit price",
  valid_until: "Valid until",
  value: "Value",
  warranty_months: "Warranty (months)",
};

const VALUES: Record<string, string> = {
  bind_with_human_approval: "binds, with a person's approval",
  may_discuss: "may discuss, not offer",
  may_disclose: "may disclose",
};

/** A key as words: the map's, else its own with spaces and a capital. */
export function label(key: string): string {
  const known = KEYS[key];
  if (known) return known;
  const spaced = key.replace(/_/g, " ").trim();
  return spaced ? spaced[0].toUpperCase() + spaced.slice(1) : key;
}

/** An enumerated value as words when it is one the map knows; other text as given (it is data). */
export function valueLabel(value: string): string {
  return VALUES[value] ?? value;
}

/** Path parts that only wrap a term (Concordia's `terms.price.value`): left out when words remain. */
const WRAPPERS = new Set(["terms", "value"]);

/**
 * A flattened term's path as words: "line_items[0].unit_price" → "Line item 1 · Unit price";
 * "data.legal_name" → "Data · Legal name"; "terms.payment_terms.value" → "Payment terms".
 */
export function termLabel(path: string): string {
  const parts = path.split(".");
  const kept = parts.filter((part) => !WRAPPERS.has(part));
  return (kept.length > 0 ? kept : parts)
    .map((part) => {
      const match = /^(.*?)((?:\[\d+\])*)$/.exec(part);
      const key = match?.[1] ?? part;
      const indexes = [...(match?.[2] ?? "").matchAll(/\[(\d+)\]/g)].map((m) => String(Number(m[1]) + 1));
      return [label(key), ...indexes].join(" ");
    })
    .join(" · ");
}

/**
 * A message kind as words: `known` is the protocol's own map (from its
 * session words); a kind it does not know is spelled out from its parts
 * ("offer.something_new" → "Offer something new"), never dropped.
 */
export function kindLabel(kind: string, known: Record<string, string> = {}): string {
  const word = known[kind];
  if (word) return word;
  const spaced = kind.replace(/[._-]+/g, " ").trim().toLowerCase();
  return spaced ? spaced[0].toUpperCase() + spaced.slice(1) : kind;
}
