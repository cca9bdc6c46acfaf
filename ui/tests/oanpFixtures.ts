/**
 * OANP receipt fixtures: `devReceiptDetail` is exactly what the engine
 * answers for the vendored development receipt
 * (vendor/oanp/fixtures/dev-receipt.json, no log, test receipts off),
 * captured from `protocol::oanp::read`; the others are edits of it.
 */
import type { ReceiptDetail, ReceiptRow, ReceiptView } from "../src/lib/backend";

export const devReceiptDetail: ReceiptDetail = {
  "kind": "oanp_receipt",
  "proof": false,
  "status": "valid",
  "headline": "NOT PROOF (mode check): A test-mode (sandbox) key: test keys are free to anyone, so this receipt is proof only when test receipts are allowed.",
  "signer": {
    "pinned": true,
    "kid": "ed25519-2f3286feb69fb953",
    "label": "the Valyzen development arbiter",
    "mode": "test"
  },
  "checks": [
    {
      "id": "header",
      "ok": true,
      "skipped": false,
      "detail": "EdDSA over a detached, unencoded payload (b64 false, crit [\"b64\"]), key id ed25519-2f3286feb69fb953."
    },
    {
      "id": "key",
      "ok": true,
      "skipped": false,
      "detail": "Exactly one Ed25519 key, ed25519-2f3286feb69fb953, is embedded under the header's kid."
    },
    {
      "id": "signature",
      "ok": true,
      "skipped": false,
      "detail": "The Ed25519 signature holds over the protected header, a dot and the canonical signed payload."
    },
    {
      "id": "signer",
      "ok": true,
      "skipped": false,
      "detail": "The key is the Valyzen development arbiter's pinned test key ed25519-2f3286feb69fb953."
    },
    {
      "id": "mode",
      "ok": false,
      "skipped": false,
      "detail": "A test-mode (sandbox) key: test keys are free to anyone, so this receipt is proof only when test receipts are allowed."
    },
    {
      "id": "terms",
      "ok": true,
      "skipped": false,
      "detail": "The receipt's final_terms and session_id equal the signed ones."
    },
    {
      "id": "chain",
      "ok": false,
      "skipped": true,
      "detail": "Not checked: no session log was given (the receipt names head sha256:6c77e2c67c46ae28… and 7 envelopes)."
    }
  ],
  "allow_test": false,
  "signed": {
    "genuine": true,
    "final_terms": {
      "price": {
        "amount_minor": "41900",
        "currency": "USD",
        "amount": {
          "value": "419.00",
          "currency": "USD"
        }
      },
      "inclusions": [
        {
          "kind": "warranty",
          "value": "included"
        },
        {
          "kind": "cable",
          "value": "included"
        }
      ]
    },
    "final_terms_problem": null,
    "session_id": "01M42N9KCCR8TAGDXTFR3Q8TE8",
    "arbiter_agent_id": "arbiter-dev.valyzen.ai",
    "fairness_profile": "default/v0.1",
    "rounds_completed": 1,
    "chain_head": "sha256:acb4235b461c7bcdbe2fbe77bd5a3ecb258ec4a72b8dd6de4bd847087ddd7311"
  },
  "report": {
    "notice": "The arbiter's own report: not covered by its signature, so not evidence of anything.",
    "session_id": "01M42N9KCCR8TAGDXTFR3Q8TE8",
    "state": "agreed",
    "enforcement": "arbitrated",
    "claimed_mode": "test",
    "arbiter_agent_id": "arbiter-dev.valyzen.ai",
    "arbiter_relationship": "affiliated",
    "max_rounds": 5,
    "rounds_completed": 1,
    "parties": [
      {
        "role": "buyer",
        "agent_id": "site-fixture",
        "commitment": "sha256:62908c3ea6c1d7dfcfdbaa6b6fa8aec233682a839bb1b5bb1f2a36a947f749db",
        "max_rounds": 5,
        "currency": "USD",
        "inclusions": [],
        "utilities": [],
        "other_preferences": [],
        "problem": null
      },
      {
        "role": "merchant",
        "agent_id": "ten_sandbox.merchant",
        "commitment": "sha256:f03cf379879f8a57557069c1362888801a2a94566bb0aecf0a85cf8a2b993a49",
        "max_rounds": 5,
        "currency": "USD",
        "inclusions": [
          {
            "kind": "warranty",
            "value": "included"
          },
          {
            "kind": "cable",
            "value": "included"
          }
        ],
        "utilities": [
          {
            "kind": "cable",
            "value": "0.3"
          },
          {
            "kind": "warranty",
            "value": "0.3"
          }
        ],
        "other_preferences": [],
        "problem": null
      }
    ],
    "rounds": [
      {
        "round": 1,
        "verdict": "fair",
        "fairness_score": "1.0000",
        "price": {
          "amount_minor": "41900",
          "currency": "USD",
          "amount": {
            "value": "419.00",
            "currency": "USD"
          }
        },
        "suggested_price": {
          "amount_minor": "41900",
          "currency": "USD",
          "amount": {
            "value": "419.00",
            "currency": "USD"
          }
        },
        "suggested_basis": "derived",
        "outcome": "pending",
        "problem": null
      },
      {
        "round": 1,
        "verdict": "fair",
        "fairness_score": "1.0000",
        "price": {
          "amount_minor": "41900",
          "currency": "USD",
          "amount": {
            "value": "419.00",
            "currency": "USD"
          }
        },
        "suggested_price": {
          "amount_minor": "41900",
          "currency": "USD",
          "amount": {
            "value": "419.00",
            "currency": "USD"
          }
        },
        "suggested_basis": "derived",
        "outcome": "accepted",
        "problem": null
      }
    ],
    "invariants": [
      {
        "id": "I1",
        "name": "Bounded rounds",
        "status": "enforced",
        "detail": "bounded at 5 rounds; 1 used",
        "problem": null
      },
      {
        "id": "I2",
        "name": "Symmetric information to the arbiter",
        "status": "held",
        "detail": "both parties declared their constraints before any offer was scored",
        "problem": null
      },
      {
        "id": "I3",
        "name": "Constraint immutability within a session",
        "status": "verified",
        "detail": "every revealed constraint matched its commitment",
        "problem": null
      },
      {
        "id": "I4",
        "name": "Monotonic concession",
        "status": "enforced",
        "detail": "every offer was checked against that party's own previous offer",
        "problem": null
      },
      {
        "id": "I5",
        "name": "Fairness-score verdict per round",
        "status": "enforced",
        "detail": "2 evaluations, 0 rejected",
        "problem": null
      },
      {
        "id": "I6",
        "name": "Signed final artifact",
        "status": "signed",
        "detail": "Ed25519 detached JWS over RFC 8785 canonical bytes",
        "problem": null
      },
      {
        "id": "I7",
        "name": "Auditable history",
        "status": "chained",
        "detail": "7 envelopes, each linked to its predecessor",
        "problem": null
      }
    ],
    "stated_final_terms": {
      "price": {
        "amount_minor": "41900",
        "currency": "USD",
        "amount": {
          "value": "419.00",
          "currency": "USD"
        }
      },
      "inclusions": [
        {
          "kind": "warranty",
          "value": "included"
        },
        {
          "kind": "cable",
          "value": "included"
        }
      ]
    },
    "close": null,
    "arbiter_signature_report": "valid: signature verified",
    "chain_head": "sha256:6c77e2c67c46ae28c8c0eacb819df89f3e92ca90c52122d544c6922c98cae6a9",
    "chain_length": 7,
    "problems": []
  },
  "unknown_members": []
};

export function receiptRow(overrides: Partial<ReceiptRow> = {}): ReceiptRow {
  return {
    receipt_id: "rcpt_dev", protocol: "oanp", file_name: "dev-receipt.json", has_log: false,
    imported_at: "2026-11-29T10:00:00Z", sandbox: false, session_id: "01M42N9KCCR8TAGDXTFR3Q8TE8",
    proof: false, status: "valid", test_mode: true, headline: devReceiptDetail.headline, ...overrides,
  };
}

export function receiptView(detail: Partial<ReceiptDetail> = {}, row: Partial<ReceiptRow> = {}): ReceiptView {
  return {
    row: receiptRow(row), log_file_name: null, receipt_sha256: "ab".repeat(32), log_sha256: null,
    receipt_bytes: 6012, log_bytes: null, detail: { ...structuredClone(devReceiptDetail), ...detail },
    held_log: null, filed_before: false, relaxed: [],
  };
}

/** The forged receipt as the engine shows it: a valid signature under a key nobody pinned. */
export function forgedView(): ReceiptView {
  const checks = devReceiptDetail.checks.map((c) =>
    c.id === "signer" ? { ...c, ok: false, detail: "The kid ed25519-deadbeef is not a pinned arbiter key." }
      : c.id === "mode" ? { ...c, ok: false, skipped: true, detail: "There is no pinned signer, so no mode to weigh." } : c);
  return receiptView({
    proof: false, checks,
    headline: "NOT PROOF (signer check): The kid ed25519-deadbeef is not a pinned arbiter key.",
    signer: { pinned: false, kid: "ed25519-deadbeef", label: null, mode: null },
    signed: { ...devReceiptDetail.signed, genuine: false },
  }, { receipt_id: "rcpt_forged", file_name: "forged-receipt.json", test_mode: false });
}

import type { OanpOfferView, ProposalView } from "../src/lib/backend";
import { inboxItem, PURCHASE_REASONS } from "./fixtures";

const usd = (minor: string, value: string) => ({ amount_minor: minor, currency: "USD", amount: { value, currency: "USD" } });

/** A merchant's OANP counter the org's buyer agent asks about before offer.accept, as the engine shows it. */
export function oanpOfferView(overrides: Partial<OanpOfferView> = {}): ProposalView {
  const detail: OanpOfferView = {
    offer: { message_type: "offer.counter", sender: "merchant", round: 2, terms: { price: usd("41900", "419.00"), inclusions: [{ kind: "warranty", value: "included" }] } },
    previous: { message_type: "offer.propose", sender: "buyer", round: 1, terms: { price: usd("39900", "399.00"), inclusions: [{ kind: "cable", value: "included" }] } },
    previous_ref: { seq: 4, actor: "buyer" },
    price_change: { absolute: "20", percent: "5.01", effect: "worse" },
    inclusions_added: [{ kind: "warranty", value: "included" }],
    inclusions_removed: [{ kind: "cable", value: "included" }],
    envelope: { message_id: "m6", hash: "sha256:6e6e", seq: 6 },
    verdict: { message_type: "arbitration.evaluate", verdict: "fair", fairness_score: "1.0000", suggested_price: usd("41500", "415.00"), reason: null, seq: 7 },
    max_rounds: 5, rounds_left: 3,
    request: { request_id: "r1", action: "accept", amount: { value: "419.00", currency: "USD" }, threshold: { value: "250000", currency: "USD" } },
    notice: "OANP envelopes are not signed: this is the log as your organization's agent mirrored it, chained envelope to envelope. Only the arbiter's receipt, once it verifies against this log, is evidence.",
    ...overrides,
  };
  return {
    item: inboxItem({
      session_id: "oanp:ses_monitor", protocol: "oanp", proposal_kind: "oanp_offer", seq: 6, event_hash: "sha256:6e6e",
      kind: "offer.counter", actor: "merchant",
      counterparty: { id: "merchant", name: "Contoso Monitors", organization: "Contoso", fingerprint: "", status: "declared", verified: null },
      amount: { value: "419.00", currency: "USD" }, previous_amount: { value: "399.00", currency: "USD" },
      change: { absolute: "20", percent: "5.01", effect: "worse" }, approvals_required: 1, approvals_given: 0,
    }),
    detail: { proposal_kind: "oanp_offer", ...detail },
    verification: { state: "unproven", detail: null, failing_seq: null, checks: [] },
    approvals: [], expired: false, pending: true, decision: null,
    capabilities: { actions: ["approve", "decline", "counter"], after_expiry: [], decline_needs_reason: true, counter_form: "oanp_terms",
      decline_label: "Decline offer", decline_reasons: [...PURCHASE_REASONS], decision_goes_to: "own_agent", deadline_is_ours: true, expiry_note: null,
      signed_as: "an ApprovalReceipt signed with your key (its did:key), referencing the OANP session" },
  };
}
