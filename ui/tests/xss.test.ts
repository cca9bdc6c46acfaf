import { afterEach, describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import type { AnpOffer as Offer } from "../src/lib/backend";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle } from "./helpers";

const IMG = `<img src=x onerror="window.__pwned = true">`;
const SCRIPT = `<script>window.__pwned = true</script>`;
const BOTH = `${IMG}${SCRIPT}`;

declare global { interface Window { __pwned?: boolean } }

/** Counterparty text in every field a vendor controls. */
function hostileBackend(): FakeBackend {
  const backend = new FakeBackend();
  const counterparty = { ...fx.contoso, organization: `Evil ${IMG}`, name: `Agent ${SCRIPT}` };
  const offer: Offer = {
    ...fx.currentOffer,
    line_items: [{ sku: `SKU-${IMG}`, description: `Seats ${SCRIPT}`, quantity: 1, unit: `u${IMG}`, unit_price: 1, currency: "USD" }],
    conditions: [`Net 60 ${BOTH}`],
    notes: `Please approve. ${BOTH}`,
  };
  const diff = fx.offerDiff();
  diff.line_items[2].new = offer.line_items[0];
  diff.line_items[1].fields[0] = { field: "description", old: "Seats", new: `Seats ${SCRIPT}`, absolute: null, percent: null, effect: null };
  diff.conditions.added = [`Net 60 ${BOTH}`];
  diff.notes = { old: "fine", new: `Please approve. ${BOTH}` };
  const item = fx.inboxItem({ counterparty, held_reason: `screen says ${IMG}` });
  backend.items = [item];
  backend.views.set(item.event_hash, fx.offerView({
    item, offer, diff,
    vendor_envelope: { party: `Evil ${IMG}`, human_contact: SCRIPT, agent: { name: `Bot ${IMG}`, declared_ai: SCRIPT } },
    verification: { state: "unproven", detail: `host said ${IMG}`, failing_seq: 4, checks: [SCRIPT] },
  }));
  backend.rows = [{ ...fx.sessionRows()[0], counterparty }];
  const detail = fx.sessionDetail();
  detail.row = { ...detail.row, counterparty };
  detail.timeline[2] = { ...detail.timeline[2], summary: `Message: ${BOTH}` };
  backend.detail = detail;
  return backend;
}

function assertInert(root: HTMLElement) {
  expect(root.querySelector("img")).toBeNull();
  expect(root.querySelector("script")).toBeNull();
  expect(window.__pwned).toBeUndefined();
}

describe("counterparty text is data", () => {
  afterEach(() => { delete window.__pwned; });

  it("renders HTML and script payloads literally in the inbox, the offer and the approval summary", async () => {
    const user = userEvent.setup();
    const { container } = await renderApp(hostileBackend());
    expect(byId(container, "inbox-counterparty").textContent).toBe(`Evil ${IMG}`);
    expect(byId(container, "held-reason").textContent).toBe(`held: screen says ${IMG}`);
    assertInert(container);

    await user.click(byId(container, "inbox-row"));
    await settle();
    const view = byId(container, "offer-view");
    const text = view.textContent ?? "";
    for (const literal of [`SKU-${IMG}`, `Seats ${SCRIPT}`, `Net 60 ${BOTH}`, `Please approve. ${BOTH}`, `Agent ${SCRIPT}`, `host said ${IMG}`]) {
      expect(text).toContain(literal);
    }
    expect(byId(view, "envelope-vendor").textContent).toContain(`Evil ${IMG}`);
    expect(byId(view, "envelope-vendor").textContent).toContain(`Bot ${IMG}`);
    assertInert(container);

    await user.click(byId(container, "show-full-offers"));
    expect(byId(container, "current-offer").textContent).toContain(`Please approve. ${BOTH}`);
    expect(byId(container, "current-offer").textContent).toContain(`SKU-${IMG}`);
    assertInert(container);

    await user.click(byId(container, "approve-button"));
    const summary = byId(container, "approve-summary").textContent ?? "";
    expect(summary).toContain(`Seats ${SCRIPT}`);
    expect(summary).toContain(`Net 60 ${BOTH}`);
    assertInert(container);
  });

  it("renders a hostile message body literally in the session timeline", async () => {
    const user = userEvent.setup();
    const { container } = await renderApp(hostileBackend());
    await user.click(byId(container, "nav-history"));
    await settle();
    expect(byId(container, "history-row").textContent).toContain(`Evil ${IMG}`);
    await user.click(byId(container, "history-row"));
    await settle();
    const summaries = [...container.querySelectorAll("[data-testid='timeline-summary']")].map((el) => el.textContent);
    expect(summaries).toContain(`Message: ${BOTH}`);
    assertInert(container);
  });

  it("renders hostile words literally in a decision, its toast and a dispute", async () => {
    const user = userEvent.setup();
    const backend = hostileBackend();
    const item = fx.inboxItem({ counterparty: { ...fx.contoso, organization: `Evil ${IMG}` } });
    backend.decide = async () => ({ decision_id: "d", outcome: "appended", detail: `host says ${BOTH}`,
      appended: { seq: 6, kind: "accept", event_hash: "h", verified: false } });
    backend.views.set(item.event_hash, fx.decidedView({ item,
      decision: { action: "approve", outcome: "appended", decided_by: `me ${IMG}`, at: "2026-11-29T11:58:00Z",
        decision_id: "d", appended: null, detail: `host says ${BOTH}`, reason: `declined ${BOTH}`, breach: `accepted ${BOTH}`, countered: null } }));
    backend.detail = { ...fx.disputedDetail(), dispute: fx.disputeView({ counterparty: `Evil ${IMG}`, host_label: `Host ${SCRIPT}` }) };
    const { container } = await renderApp(backend);
    await user.click(byId(container, "inbox-row"));
    await settle();
    expect(byId(container, "decision-detail").textContent).toBe(`host says ${BOTH}`);
    expect(byId(container, "decision-by").textContent).toBe(`me ${IMG}`);
    expect(byId(container, "decision-reason").textContent).toBe(`declined ${BOTH}`);
    expect(byId(container, "decision-breach").textContent).toBe(`accepted ${BOTH}`);
    assertInert(container);
    backend.emitOpenSession({ host_id: "h-sandbox", session_id: "s-fabrikam" });
    await settle();
    expect(byId(container, "dispute-counterparty").textContent).toBe(`Evil ${IMG}`);
    expect(byId(container, "dispute-host").textContent).toBe(`Host ${SCRIPT}`);
    assertInert(container);
  });
});
