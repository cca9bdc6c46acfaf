/**
 * Plain terms as the engine would show them: the org's procurement agent
 * (no negotiation protocol) asks a person about revised terms with
 * Northwind Traders. The revision lowers the laptops' unit price, drops the
 * extended warranty, adds a setup service and a delivery condition, and
 * changes the term. Every amount is the host's exact text; the totals are
 * what `crates/plain` computes (17985.5175 now, 19048.20 before).
 */
import type { Capabilities, PlainLineItem, PlainTerms, PlainTermsDiff, PlainTermsView, ProposalView } from "../src/lib/backend";
import { inboxItem, PURCHASE_REASONS } from "./fixtures";

export const laptops: PlainLineItem = { description: "Laptop, 14-inch", sku: "NW-LAP-14", quantity: "12", unit_price: "1249.99" };
export const laptopsBefore: PlainLineItem = { ...laptops, unit_price: "1299.00" };
export const docks: PlainLineItem = { description: "Docking station", sku: "NW-DOCK", quantity: "12", unit_price: "189.35" };
export const warranty: PlainLineItem = { description: "Extended warranty, 3 years", sku: "NW-WAR-3Y", quantity: "12", unit_price: "99.00" };
/** A line without a SKU, in hours: 7.5 × 95.125 = 713.4375 exactly. */
export const setup: PlainLineItem = { description: "Setup service", quantity: "7.5", unit: "hour", unit_price: "95.125" };

const northwind = { name: "Northwind Traders", id: "northwind.example" };

/** The revised terms the agent asks about. */
export function plainTerms(overrides: Partial<PlainTerms> = {}): PlainTerms {
  return {
    counterparty: { ...northwind }, currency: "USD", line_items: [{ ...laptops }, { ...docks }, { ...setup }],
    term: "36 months of support", conditions: ["Net 30 payment", "Delivery by 15 January 2027"], total: "17985.5175",
    ...overrides,
  };
}

/** The terms they revise. */
export function previousTerms(): PlainTerms {
  return {
    counterparty: { ...northwind }, currency: "USD", line_items: [{ ...laptopsBefore }, { ...docks }, { ...warranty }],
    term: "24 months of support", conditions: ["Net 30 payment"], total: "19048.20",
  };
}

/** The engine's diff of the revised terms against the ones they revise. */
export function plainDiff(): PlainTermsDiff {
  return {
    line_items: [
      { status: "changed", key: "NW-LAP-14", old: { ...laptopsBefore }, new: { ...laptops }, fields: ["unit_price"] },
      { status: "unchanged", key: "NW-DOCK", old: { ...docks }, new: { ...docks }, fields: [] },
      { status: "removed", key: "NW-WAR-3Y", old: { ...warranty }, new: null, fields: [] },
      { status: "added", key: "Setup service", old: null, new: { ...setup }, fields: [] },
    ],
    conditions_added: ["Delivery by 15 January 2027"],
    conditions_removed: [],
    term: { old: "24 months of support", new: "36 months of support" },
    currency: null,
    total: { old: "19048.20", new: "17985.5175" },
    total_change: { absolute: "-1062.6825", percent: "-5.58", effect: "better" },
  };
}

export const plainCapabilities: Capabilities = {
  actions: ["approve", "decline", "counter"], after_expiry: [], decline_needs_reason: true, counter_form: "plain_terms",
  decline_label: "Decline the terms", decline_reasons: [...PURCHASE_REASONS], decision_goes_to: "own_agent", deadline_is_ours: true,
  expiry_note: null, signed_as: "an ApprovalReceipt signed with your key, over the host's entry for these terms",
};

export const plainRef = { host_id: "h-sandbox", session_id: "plain:thr_northwind", event_hash: "sha256:9a9a77" };

/** The proposal view of the revised terms; override any member of the plain view. */
export function plainView(overrides: Partial<PlainTermsView> = {}, view: Partial<Omit<ProposalView, "detail">> = {}): ProposalView {
  const detail: PlainTermsView = {
    terms: plainTerms(), previous: previousTerms(), previous_ref: { seq: 1, actor: "agt_procure" }, diff: plainDiff(),
    rationale: "Northwind matched the price of our second quote.\nThe warranty is covered by our own service contract.",
    agent: { id: "agt_procure", name: "Procurement Assistant" },
    entry: { seq: 3, hash: "sha256:9a9a77", at: "2026-11-29T11:40:00Z", request_id: "req-nw-2", revises: "req-nw-1" },
    request: { request_id: "req-nw-2", action: "accept", amount: { value: "17985.5175", currency: "USD" }, threshold: { value: "10000", currency: "USD" } },
    notice: "Plain terms: our own agent wrote these and the host signed the entry holding them. No counterparty signed anything.",
    ...overrides,
  };
  return {
    item: inboxItem({
      session_id: plainRef.session_id, protocol: "plain", proposal_kind: "plain_terms", seq: 3, event_hash: plainRef.event_hash,
      kind: "plain.terms", side: "ours", actor: "agt_procure",
      counterparty: { id: "northwind.example", name: "Northwind Traders", organization: null, fingerprint: "", status: "declared", verified: null },
      amount: { value: "17985.5175", currency: "USD" }, previous_amount: { value: "19048.20", currency: "USD" },
      change: { absolute: "-1062.6825", percent: "-5.58", effect: "better" }, approvals_required: 1, approvals_given: 0,
    }),
    detail: { proposal_kind: "plain_terms", ...detail },
    verification: { state: "verified", detail: null, failing_seq: null, checks: ["3 entries signed by the host"] },
    approvals: [], expired: false, pending: true, decision: null, capabilities: plainCapabilities,
    ...view,
  };
}
