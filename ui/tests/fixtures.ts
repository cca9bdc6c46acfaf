/**
 * Realistic contract data for tests: what the engine would hand the UI for a
 * renewal negotiation with a few rounds.
 */
import type {
  AnpOffer as Offer, AnpOfferDiff as OfferDiff, AnpOfferView, AppState, Capabilities, ConcordiaOfferView, Counterparty,
  DisputeView, HostInfo, InboxItem, ProposalView, SessionDetail, SessionRow, SettingsView, StandInView, StandInsView,
} from "../src/lib/backend";

export const NOW = Date.parse("2026-11-29T12:00:00Z");

export const sandboxHost: HostInfo = {
  host_id: "h-sandbox", url: "http://127.0.0.1:4100", label: "Sandbox", sandbox: true, reachable: true,
  last_error: null, last_poll_at: "2026-11-29T11:59:30Z", platform_fingerprint: "SHA256:pLaTfOrM0001",
  approver_email: "ana@buyer.example", polled: true,
  plain_http: false, plain_http_allowed_at: null,
  updates: { mode: "waiting", detail: "Hears of changes at once: one request waits at the host until something changes." },
};

export const appState: AppState = { sandbox: true, unread: 2, waiting: 3, hosts: [sandboxHost], data_dir: "/data/countersign",
  approver: { name: "Ana Approver", email: "ana@buyer.example" }, locale: "en-GB", time_zone: "UTC", key_kept: true, key_loaded: true };

export const contoso: Counterparty = {
  id: "agt_contoso", name: "Contoso Negotiation Agent", organization: "Contoso GmbH",
  fingerprint: "SHA256:c0nt0s0FiNgErPrInT", status: "sandbox", verified: true,
};
export const fabrikam: Counterparty = {
  id: "agt_fabrikam", name: "Fabrikam Sales Bot", organization: "Fabrikam Inc",
  fingerprint: "SHA256:fAbRiKaM", status: "verified", verified: true,
};
export const northwind: Counterparty = {
  id: "agt_northwind", name: "Northwind Agent", organization: "Northwind Traders",
  fingerprint: "SHA256:n0rThWiNd", status: "verified", verified: true,
};

/** An exact amount in USD. */
export const usd = (value: string) => ({ value, currency: "USD" });

/** An inbox item; override what a test cares about. */
export function inboxItem(overrides: Partial<InboxItem> = {}): InboxItem {
  return {
    host_id: "h-sandbox", session_id: "s-contoso", protocol: "ANP/0.1", proposal_kind: "anp_offer", seq: 5,
    event_hash: "hash-contoso-5", kind: "counter_offer", side: "counterparty",
    actor: "vendor_agent", is_draft: false, counterparty: contoso, amount: usd("540000"),
    previous_amount: usd("570000"), change: { absolute: "-30000", percent: "-5.26", effect: "better" }, gap: null,
    expires_at: "2026-11-29T14:05:00Z", verification: "verified", approvals_given: 0, approvals_required: 1,
    unread: true, held_reason: null, chain: null, waits_on_you: true, ...overrides,
  };
}

/** Three pending decisions, deliberately not in expiry order. */
export function inboxItems(): InboxItem[] {
  return [
    inboxItem(),
    inboxItem({
      session_id: "s-fabrikam", seq: 3, event_hash: "hash-fabrikam-3", kind: "offer", counterparty: fabrikam,
      amount: usd("125000.50"), previous_amount: usd("120000"), change: { absolute: "5000.50", percent: "4.17", effect: "worse" },
      expires_at: "2026-11-29T12:00:45Z", approvals_required: 2, approvals_given: 1, unread: false,
    }),
    inboxItem({
      session_id: "s-northwind", seq: 7, event_hash: "hash-northwind-7", actor: "buyer", side: "ours", is_draft: true,
      counterparty: northwind, amount: usd("88000"), previous_amount: null, change: null,
      expires_at: "2026-12-02T09:00:00Z", verification: "unproven", held_reason: "screening unavailable",
    }),
  ];
}

export const previousOffer: Offer = {
  currency: "USD", term_months: 36, expires_at: "2026-11-28T00:00:00Z",
  line_items: [
    { sku: "CRM-ENT", description: "CRM Enterprise seats", quantity: 500, unit: "seat/year", unit_price: 1140, currency: "USD" },
    { sku: "SUP-PREM", description: "Premier support", quantity: 1, unit: "year", unit_price: 0, currency: "USD" },
    { sku: "TRAIN", description: "Onboarding training", quantity: 10, unit: "day", unit_price: 1500, currency: "USD" },
  ],
  total_annual: 570000,
  conditions: ["Net 60 payment", "Price hold through the term"],
  notes: "Includes premier support.",
};

export const currentOffer: Offer = {
  currency: "USD", term_months: 24, expires_at: "2026-11-29T14:05:00Z",
  line_items: [
    { sku: "SUP-PREM", description: "Premier support", quantity: 1, unit: "year", unit_price: 0, currency: "USD" },
    { sku: "CRM-ENT", description: "CRM Enterprise seats", quantity: 500, unit: "seat/year", unit_price: 1080, currency: "USD" },
    { sku: "SSO", description: "SSO add-on", quantity: 500, unit: "seat/year", unit_price: 12, currency: "USD" },
  ],
  total_annual: 540000,
  conditions: ["Net 60 payment", "Annual uplift capped at 3%"],
  notes: "Best and final for this quarter.",
};

/** The diff of previousOffer → currentOffer, as crates/anp/src/diff.rs would serialize it. */
export function offerDiff(): OfferDiff {
  return {
    currency: null,
    term_months: { old: "36", new: "24" },
    expires_at: { old: "2026-11-28T00:00:00Z", new: "2026-11-29T14:05:00Z" },
    notes: { old: "Includes premier support.", new: "Best and final for this quarter." },
    conditions: { added: ["Annual uplift capped at 3%"], removed: ["Price hold through the term"], unchanged: ["Net 60 payment"] },
    line_items: [
      { status: "unchanged", moved: true, key: "SUP-PREM", old_index: 1, new_index: 0,
        old: previousOffer.line_items[1], new: currentOffer.line_items[0], fields: [] },
      { status: "changed", moved: true, key: "CRM-ENT", old_index: 0, new_index: 1,
        old: previousOffer.line_items[0], new: currentOffer.line_items[1],
        fields: [{ field: "unit_price", old: "1140", new: "1080", absolute: "-60", percent: "-5.26", effect: "better" }] },
      { status: "added", moved: false, key: "SSO", old_index: null, new_index: 2,
        old: null, new: currentOffer.line_items[2], fields: [] },
      { status: "removed", moved: false, key: "TRAIN", old_index: 2, new_index: null,
        old: previousOffer.line_items[2], new: null, fields: [] },
    ],
    total: {
      old: { amount: "570000", computed: "585000", stated: "570000", mismatch: true },
      new: { amount: "540000", computed: "546000", stated: "540000", mismatch: true },
      absolute: "-30000", percent: "-5.26", currency_changed: false, effect: "better",
    },
  };
}

export const vendorEnvelope = {
  party: "Contoso GmbH",
  agent: { name: "Contoso Negotiation Agent", declared_ai: true },
  may_discuss: ["renewal pricing", "term length"],
  offer_authority: "bind_with_human_approval",
  human_contact: "sales@contoso.example",
};
export const buyerEnvelope = {
  party: "Buyer Corp", agent: { name: "Buyer Agent", declared_ai: true },
  offer_authority: "bind_with_human_approval", human_contact: "procurement@buyer.example",
};

/** The engine's decline reasons for a commercial offer. */
export const PURCHASE_REASONS = ["Price is above our budget", "Terms are not acceptable",
  "Scope does not match what we asked for", "Vendor is not approved for this purchase"] as const;

/** What the engine says an ANP offer's decision panel may offer. */
export const anpCapabilities: Capabilities = {
  actions: ["approve", "decline", "counter"], after_expiry: ["decline"], decline_needs_reason: true, counter_form: "anp_offer",
  decline_label: "Decline offer", decline_reasons: [...PURCHASE_REASONS], decision_goes_to: "counterparty", deadline_is_ours: false, expiry_note: null,
  signed_as: "an RFC-002 approval signed with your key, in an accept event",
};

/** A view's neutral members and, flat beside them, its ANP offer view's: a test overrides either. */
export type ViewOverrides = Partial<Omit<ProposalView, "detail">> & Partial<AnpOfferView>;

const ANP_KEYS = ["offer", "previous", "previous_ref", "diff", "vendor_envelope", "buyer_envelope"] as const;

/** The offer view of the first inbox item (an ANP counter-offer). */
export function offerView(overrides: ViewOverrides = {}): ProposalView {
  const anp: AnpOfferView = {
    offer: currentOffer, previous: previousOffer, previous_ref: { seq: 3, actor: "buyer" },
    diff: offerDiff(), vendor_envelope: vendorEnvelope, buyer_envelope: buyerEnvelope,
  };
  const neutral: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(overrides)) {
    if ((ANP_KEYS as readonly string[]).includes(key)) (anp as unknown as Record<string, unknown>)[key] = value;
    else neutral[key] = value;
  }
  return {
    item: inboxItem(), detail: { proposal_kind: "anp_offer", ...anp },
    verification: { state: "verified", detail: null, failing_seq: null, checks: ["chain extends pinned head", "4 signatures verified"] },
    approvals: [], expired: false, pending: true, decision: null, capabilities: anpCapabilities,
    ...(neutral as Partial<ProposalView>),
  };
}

/** The first item's offer once this console approved it: out of the pending set, with the accept it appended. */
export function decidedView(overrides: ViewOverrides = {}): ProposalView {
  return offerView({
    item: inboxItem({ unread: false }), pending: false,
    decision: {
      action: "approve", outcome: "appended", decided_by: "ana@buyer.example", at: "2026-11-29T11:58:00Z",
      decision_id: "d-42", appended: { seq: 6, kind: "accept", event_hash: "hash-accept-6", verified: true },
      detail: "Accepted the offer at seq 5 (accept is seq 6).", reason: null, breach: null, countered: null,
    },
    ...overrides,
  });
}

export function sessionRows(): SessionRow[] {
  return [
    { host_id: "h-sandbox", session_id: "s-contoso", protocol: "ANP/0.1", counterparty: contoso, status: "open", state: "open", sandbox: true,
      verification: "verified", event_count: 6, last_amount: usd("540000"), pending: 1, breaches: 0, updated_at: "2026-11-29T11:40:00Z" },
    { host_id: "h-sandbox", session_id: "s-fabrikam", protocol: "ANP/0.1", counterparty: fabrikam, status: "accepted", state: "agreed", sandbox: true,
      verification: "disputed", event_count: 9, last_amount: usd("125000.50"), pending: 0, breaches: 0, updated_at: "2026-11-28T09:10:00Z" },
  ];
}

export function sessionDetail(): SessionDetail {
  return {
    host_approvals: [],
    row: sessionRows()[0],
    timeline: [
      { seq: 0, side: "ours", actor: "platform", kind: "session_open", at: "2026-11-27T08:00:00Z", summary: "Session opened by Contoso Negotiation Agent",
        payload: {}, signer: "SHA256:pLaTfOrM0001", signature: "verified" },
      { seq: 1, side: "counterparty", actor: "vendor_agent", kind: "offer", at: "2026-11-27T08:01:00Z", summary: "Offer: 585000 USD, 36 months",
        payload: {}, signer: "SHA256:c0nt0s0FiNgErPrInT", signature: "verified" },
      { seq: 2, side: "ours", actor: "buyer", kind: "message", at: "2026-11-27T09:00:00Z", summary: "Message: Can you do better on seats?",
        payload: {}, signer: "SHA256:pLaTfOrM0001", signature: "unproven" },
      { seq: 3, side: "ours", actor: "buyer", kind: "counter_offer", at: "2026-11-28T09:00:00Z", summary: "Counter-offer: 520000 USD, 36 months",
        payload: {}, signer: "SHA256:pLaTfOrM0001", signature: "verified" },
      { seq: 5, side: "counterparty", actor: "vendor_agent", kind: "counter_offer", at: "2026-11-29T11:40:00Z", summary: "Counter-offer: 540000 USD, 24 months",
        payload: {}, signer: "SHA256:c0nt0s0FiNgErPrInT", signature: "verified" },
    ],
    series: {
      counterparty: [{ round: 1, seq: 1, total: "585000" }, { round: 2, seq: 5, total: "540000" }],
      ours: [{ round: 1, seq: 3, total: "520000" }],
    },
    decisions: [{ decision_id: "d-1", action: "counter", in_response_to: "hash-contoso-1", outcome: "appended", at: "2026-11-28T09:00:00Z", receipt: null , signed_with: "9f2c41d07a5be3c8", chain: null }],
    verification: { state: "verified", detail: null, failing_seq: null, checks: [] },
    agreed: null,
    dispute: null,
  };
}

/** The dispute of a session whose host rewrote event 3. */
export function disputeView(overrides: Partial<DisputeView> = {}): DisputeView {
  return {
    host_id: "h-sandbox", host_label: "Sandbox", host_url: "http://127.0.0.1:4100", session_id: "s-fabrikam",
    protocol: "ANP/0.1", counterparty: "Fabrikam Inc", detected_at: "2026-11-29T11:00:00Z", failing_seq: 3, checks: ["payload_hash"],
    detail: "event 3: payload_hash does not match the payload", request: "GET /api/console/v1/sessions/s-fabrikam/log",
    host_answer_kept: true, acknowledged: null, ...overrides,
  };
}

/** A disputed session in full. */
export function disputedDetail(): SessionDetail {
  const detail = sessionDetail();
  return {
    ...detail,
    row: { ...sessionRows()[1] },
    verification: { state: "disputed", detail: "event 3: payload_hash does not match the payload", failing_seq: 3, checks: ["payload_hash"] },
    dispute: disputeView(),
  };
}

/** The settings as the engine declares them. */
export function settingsView(): SettingsView {
  return {
    settings: [
      { id: "poll.interval_seconds", group: "Checking hosts", label: "Poll interval", help: "How often the console asks each host for news.", confirm_on: null,
        kind: "number", min: 2, max: 3600, unit: "seconds", value: 5, default: 5 },
      { id: "notify.new_proposal", group: "Notifications", label: "A new proposal waits for a decision", help: "One per new offer.", confirm_on: null,
        kind: "toggle", value: true, default: true },
      { id: "notify.dispute", group: "Notifications", label: "A session is disputed", help: "Stays on screen.", confirm_on: null,
        kind: "toggle", value: true, default: true },
      { id: "notify.burst_summary", group: "Notifications", label: "Summary of a burst", help: "One for many.", confirm_on: null,
        kind: "toggle", value: true, default: true },
      { id: "approver.name", group: "Approver", label: "Your name", help: "Sent when connecting.", confirm_on: null,
        kind: "text", input: "text", max_len: 200, value: "Ana Approver", default: "Local approver" },
      { id: "approver.email", group: "Approver", label: "Your email", help: "Approvals carry it.", confirm_on: null,
        kind: "text", input: "email", max_len: 254, value: "ana@buyer.example", default: "approver@countersign.local" },
      { id: "look.theme", group: "Look", label: "Theme", help: "System follows the desktop's light or dark preference.", confirm_on: null,
        kind: "choice", options: [{ value: "system", label: "System" }, { value: "light", label: "Light" }, { value: "dark", label: "Dark" }],
        value: "system", default: "system" },
      { id: "oanp.allow_test_receipts", group: "OANP receipts", label: "Test-mode receipts count as proof",
        help: "Whether a receipt signed by an arbiter's test-mode key counts as proof here.",
        confirm_on: "Count test-mode receipts as proof? Every receipt signed by an arbiter's test-mode key will then show as proof.",
        kind: "toggle", value: false, default: false },
    ],
    approver: { name: "Ana Approver", email: "ana@buyer.example", key_fingerprint: "9f2c41d07a5be3c8", public_key: "pUbLiCkEy" },
    data_dir: "/data/countersign",
    key: {
      protection: "passphrase", location: "In approver-key.sealed.json, sealed with your passphrase (Argon2id, XChaCha20-Poly1305).",
      unlocked: true, loaded: true, advice: null, notice: null, idle_lock_minutes: 15, locks_at: null, confirm_above: "0",
      fingerprint: "9f2c41d07a5be3c8", moving_from: null,
      keys: [{ fingerprint: "9f2c41d07a5be3c8", since: "2026-11-01T09:00:00Z", retired_at: null }],
    },
  };
}

/** The party the org's own Concordia buying agent negotiates with. */
export const litware: Counterparty = {
  id: "agent_seller_01", name: "Litware Sales Agent", organization: "Litware Inc",
  fingerprint: "5d1c0ffee5d1c0ffee5d1c0ffee5d1c0ffee5d1c0ffee5d1c0ffee5d1c0ffee1", status: "declared", verified: null,
};

/** A pending Concordia counter-offer, as the inbox lists it. */
export function concordiaItem(overrides: Partial<InboxItem> = {}): InboxItem {
  return inboxItem({
    session_id: "concordia:ses_9d4e8f01", protocol: "concordia", proposal_kind: "concordia_offer", seq: 4,
    event_hash: "sha256:4a4a", kind: "negotiate.counter", actor: "agent_seller_01", counterparty: litware,
    amount: { value: "150000.00", currency: "USD" }, previous_amount: { value: "160000.00", currency: "USD" },
    change: { absolute: "-10000.00", percent: "-6.25", effect: "better" }, approvals_required: 2, approvals_given: 1, ...overrides,
  });
}

const money = (value: string) => ({ value, currency: "USD" });

/** A Concordia counter with a conditional offer answering a basic one, with reasoning. */
export function concordiaDetail(overrides: Partial<ConcordiaOfferView> = {}): ConcordiaOfferView {
  return {
    offer: {
      shape: "conditional", offer_id: "off_2", valid_until: "2026-11-30T09:00:00Z", complete: null, terms: [], open_terms: [],
      conditions: [
        { when: [{ name: "term_months", value: "24" }], then: [
          { id: "price", value: "150000.00", amount: money("150000.00"), attributes: [] },
        ] },
        { when: [{ name: "term_months", value: "12" }], then: [
          { id: "price", value: "165000.00", amount: money("165000.00"), attributes: [] },
        ] },
      ],
      bundles: [], select: null,
    },
    previous: {
      shape: "basic", offer_id: "off_1", valid_until: null, complete: true, open_terms: [], conditions: [], bundles: [], select: null,
      terms: [
        { id: "price", value: "160000.00", amount: money("160000.00"), attributes: [] },
        { id: "quantity", value: "500", amount: null, attributes: [{ name: "unit", value: "seat/year" }] },
      ],
    },
    previous_ref: { seq: 3, actor: "agent_buyer_42" },
    diff: {
      shape: { old: "basic", new: "conditional" },
      terms: [
        { term: "price", status: "removed", old: { id: "price", value: "160000.00", amount: money("160000.00"), attributes: [] }, new: null, amount: null, effect: null },
        { term: "quantity", status: "removed", old: { id: "quantity", value: "500", amount: null, attributes: [{ name: "unit", value: "seat/year" }] }, new: null, amount: null, effect: null },
      ],
      newly_open: [], settled: [],
      conditions: [
        { index: 0, status: "added", when_changed: false, then: [], old: null, new: null },
        { index: 1, status: "added", when_changed: false, then: [], old: null, new: null },
      ],
      bundles: [], valid_until: { old: null, new: "2026-11-30T09:00:00Z" },
    },
    message: { id: "msg_0004", message_type: "negotiate.counter", timestamp: "2026-11-29T11:30:00Z", from: "agent_seller_01", hash: "sha256:4a4a" },
    reasoning: "A longer term lets us go lower on price.",
    counterparty_key: { party: "agent_seller_01", fingerprint: litware.fingerprint, public_key: "pUbLiCkEy" },
    request: { request_id: "req_5f0c", action: "accept", amount: money("150000.00"), threshold: money("100000.00") },
    ...overrides,
  };
}

/** What the engine says a Concordia offer's decision panel may offer. */
export const concordiaCapabilities: Capabilities = {
  actions: ["approve", "decline", "counter"], after_expiry: [], decline_needs_reason: true, counter_form: "concordia_terms",
  decline_label: "Decline offer", decline_reasons: [...PURCHASE_REASONS], decision_goes_to: "own_agent", deadline_is_ours: true, expiry_note: null,
  signed_as: "an ApprovalReceipt signed with your key (its did:key)",
};

/** The proposal view of a pending Concordia counter-offer. */
export function concordiaView(detail: Partial<ConcordiaOfferView> = {}, overrides: Partial<ProposalView> = {}): ProposalView {
  return {
    item: concordiaItem(), detail: { proposal_kind: "concordia_offer", ...concordiaDetail(detail) },
    verification: { state: "verified", detail: null, failing_seq: null, checks: [] },
    approvals: [{ approved_by: "bo@buyer.example", at: "2026-11-29T11:40:00Z" }], expired: false, pending: true,
    decision: null, capabilities: concordiaCapabilities, ...overrides,
  };
}

/** A Concordia session between the org's own buying agent and Litware, as the sandbox demo writes one. */
export function concordiaSessionDetail(): SessionDetail {
  const at = (minute: number) => `2026-11-30T10:${String(minute).padStart(2, "0")}:00Z`;
  const message = (seq: number, side: "ours" | "counterparty", kind: string, summary: string) => ({
    seq, side, actor: side === "ours" ? "agent_fabrikam_procurement" : "agent_seller_01", kind, at: at(seq), summary,
    payload: {}, signer: side === "ours" ? "agent_fabrikam_procurement" : "agent_seller_01", signature: "verified" as const,
  });
  return {
    host_approvals: [],
    row: {
      host_id: "h-sandbox", session_id: "concordia:ses_9d4e8f01", protocol: "concordia", counterparty: litware, status: "agreed", state: "agreed",
      sandbox: false, verification: "verified", event_count: 9, last_amount: usd("42500"), pending: 0, breaches: 0, updated_at: at(8),
    },
    timeline: [
      message(1, "ours", "negotiate.open", "Session proposed"),
      message(2, "counterparty", "negotiate.accept_session", "Session accepted"),
      message(3, "ours", "negotiate.offer", "Offer: 40,000 USD"),
      message(4, "counterparty", "negotiate.counter", "Counter-offer: 48,000 USD"),
      message(5, "ours", "negotiate.signal", "negotiate.signal"),
      message(6, "counterparty", "negotiate.offer", "Offer: 45,000 USD"),
      message(7, "ours", "negotiate.counter", "Counter-offer: 40,000 USD"),
      message(8, "counterparty", "negotiate.counter", "Counter-offer: 42,500 USD"),
      message(9, "ours", "negotiate.accept", "Accepted"),
    ],
    series: {
      counterparty: [{ round: 1, seq: 4, total: "48000" }, { round: 2, seq: 6, total: "45000" }, { round: 3, seq: 8, total: "42500" }],
      ours: [{ round: 1, seq: 3, total: "40000" }, { round: 2, seq: 7, total: "40000" }],
    },
    decisions: [
      { decision_id: "d-c1", action: "decline", in_response_to: "sha256:4444", outcome: "appended", at: at(5), receipt: null , signed_with: "9f2c41d07a5be3c8", chain: null },
      { decision_id: "d-c2", action: "counter", in_response_to: "sha256:6666", outcome: "appended", at: at(7), receipt: null , signed_with: "9f2c41d07a5be3c8", chain: null },
      { decision_id: "d-c3", action: "approve", in_response_to: "sha256:8888", outcome: "appended", at: at(9), receipt: null , signed_with: "9f2c41d07a5be3c8", chain: null },
    ],
    verification: { state: "verified", detail: null, failing_seq: null, checks: [] },
    agreed: {
      proposal_seq: 8, accept_seq: 9, accepted_at: at(9), accepted_by: "ours", summary: "Counter-offer: 42,500 USD",
      terms: [
        { name: "terms.delivery_date.value", value: "2027-03-01" },
        { name: "terms.payment_terms.value", value: "Net 30" },
        { name: "terms.price.value", value: "42500" },
        { name: "terms.quantity.value", value: "500" },
        { name: "terms.warranty_months.value", value: "24" },
      ],
    },
    dispute: null,
  };
}

/** One delegation as the host lists it; override what a test cares about. */
export function standIn(overrides: Partial<StandInView> = {}): StandInView {
  return {
    delegation_id: "dlg-grace-finance", from: "ana@buyer.example", from_name: "Ana Approver",
    to: "grace@buyer.example", to_name: "Grace", roles: ["finance"],
    from_date: "2026-12-10", to_date: "2026-12-11", zone: "Europe/Berlin",
    starts_at: "2026-12-09T23:00:00.000Z", ends_at: "2026-12-11T23:00:00.000Z",
    state: "in_force", revoked_at: null, revoked_by: null, ...overrides,
  };
}

/** The Stand-ins screen at one host on Thu 10 Dec 2026 (Berlin): Ana holds buyer and finance. */
export function standInsView(): StandInsView {
  return {
    zone: "Europe/Berlin", today: "2026-12-10",
    hosts: [{
      host_id: "h-sandbox", host_label: "Sandbox", me: "ana@buyer.example",
      given: [
        standIn(),
        standIn({ delegation_id: "dlg-frank-buyer", to: "frank@buyer.example", to_name: "Frank", roles: ["buyer", "finance"],
          from_date: "2026-12-01", to_date: "2026-12-02", starts_at: "2026-11-30T23:00:00.000Z", ends_at: "2026-12-02T23:00:00.000Z",
          state: "ended" }),
        standIn({ delegation_id: "dlg-grace-old", from_date: "2026-12-03", to_date: "2026-12-03", starts_at: "2026-12-02T23:00:00.000Z",
          ends_at: "2026-12-03T23:00:00.000Z", state: "revoked", revoked_at: "2026-12-02T08:00:00.000Z", revoked_by: "ana@buyer.example" }),
      ],
      received: [
        standIn({ delegation_id: "dlg-fay-cfo", from: "fay@buyer.example", from_name: "Fay", to: "ana@buyer.example", to_name: "Ana Approver",
          roles: ["cfo"], from_date: "2026-12-14", to_date: "2026-12-18", zone: "America/New_York",
          starts_at: "2026-12-14T05:00:00.000Z", ends_at: "2026-12-19T05:00:00.000Z", state: "scheduled" }),
      ],
      my_roles: ["buyer", "finance"],
      colleagues: [{ email: "frank@buyer.example", name: "Frank" }, { email: "grace@buyer.example", name: "Grace" }],
      error: null,
    }],
  };
}
