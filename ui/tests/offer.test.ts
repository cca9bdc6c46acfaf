import { describe, expect, it, vi } from "vitest";
import { render } from "@testing-library/svelte";
import ProposalView from "../src/lib/views/ProposalView.svelte";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import type { AnpOfferView } from "../src/lib/backend";
import { byId, settle, texts } from "./helpers";

const ref = { host_id: "h-sandbox", session_id: "s-contoso", event_hash: "hash-contoso-5" };

async function renderOffer(backend = new FakeBackend()) {
  const result = render(ProposalView, { props: { backend, proposalRef: ref, onBack: () => {} } });
  await settle();
  return { ...result, backend };
}

describe("offer view", () => {
  it("shows added, removed, changed and moved line items as words, signs and colour", async () => {
    const { container } = await renderOffer();
    const rows = [...container.querySelectorAll<HTMLElement>("[data-testid='diff-row']")];
    expect(rows.map((r) => [r.dataset.status, r.dataset.moved])).toEqual([
      ["unchanged", "true"], ["changed", "true"], ["added", "false"], ["removed", "false"],
    ]);
    expect(rows[0].textContent).toContain("moved");
    expect(rows[0].textContent).toContain("line 2 → 1");
    expect(rows[2].textContent).toContain("+ added");
    expect(rows[2].textContent).toContain("500 seat/year × 12 USD");
    expect(rows[3].textContent).toContain("− removed");
    expect(rows[3].textContent).toContain("Onboarding training");
    const field = byId(container, "diff-field");
    expect(field.dataset.field).toBe("unit_price");
    const cells = [...field.querySelectorAll("td")].map((cell) => cell.textContent?.trim());
    expect(cells.slice(2, 5)).toEqual(["Unit price", "1,140", "1,080"]);
    const change = byId(field, "field-change");
    expect(change.textContent).toContain("−60 (−5.26%)");
    expect(change.dataset.effect).toBe("better");
    expect(change.classList.contains("better")).toBe(true);
  });

  it("shows a long offer's first lines at once and the rest a chunk per frame after it", async () => {
    const backend = new FakeBackend();
    const view = fx.offerView();
    const diff = (view.detail as AnpOfferView).diff!;
    const line = diff.line_items[2];
    diff.line_items = Array.from({ length: 200 }, () => structuredClone(line));
    backend.views.set("hash-contoso-5", view);
    const { container } = await renderOffer(backend);
    expect(container.querySelectorAll("[data-testid='diff-row']")).toHaveLength(12);
    expect(byId(container, "diff-pending").textContent).toBe("Showing 12 of 200 line items…");
    expect(byId(container, "decide-panel")).toBeTruthy();
    await vi.waitFor(() => expect(container.querySelectorAll("[data-testid='diff-row']")).toHaveLength(200),
      { timeout: 2000, interval: 20 });
    expect(container.querySelector("[data-testid='diff-pending']")).toBeNull();
  });

  it("shows terms, conditions added and removed, and the total change", async () => {
    const { container } = await renderOffer();
    const scalars = [...container.querySelectorAll("[data-testid='diff-scalar']")].map((row) =>
      [...row.querySelectorAll("th, td")].map((cell) => cell.textContent));
    expect(scalars).toEqual([
      ["Term (months)", "36", "→", "24"],
      ["Expires", "Sat 28 Nov, 00:00", "→", "Sun 29 Nov, 14:05"],
    ]);
    // Notes are prose, not a term: apart from the terms.
    expect(texts(container, "diff-notes")[0]).toContain("Includes premier support.");
    expect(texts(container, "diff-notes")[0]).toContain("→ Best and final for this quarter.");
    expect(texts(container, "condition-added")).toEqual(["+ added Annual uplift capped at 3%"]);
    expect(texts(container, "condition-removed")).toEqual(["− removed Price hold through the term"]);
    const total = texts(container, "diff-total")[0];
    expect(total).toMatch(/^570,000 USD →to 540,000 USD −30,000 \(−5\.26%\) better better for the buyer$/);
  });

  it("confirms our buyer agent's draft as ours, sent to the vendor, not as an offer from them", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.offerView({
      item: fx.inboxItem({ actor: "buyer", side: "ours", is_draft: true, counterparty: fx.northwind }),
    }));
    const { container } = await renderOffer(backend);
    byId<HTMLButtonElement>(container, "approve-button").click();
    await settle();
    const lead = (byId(container, "accept-summary-lead").textContent ?? "").replace(/\s+/g, " ");
    expect(lead).toContain("let our buyer agent send this counter-offer to Northwind Traders");
    expect(lead).not.toContain("from Northwind");
  });

  it("flags a stated total that disagrees with its line items", async () => {
    const { container } = await renderOffer();
    expect(byId(container, "offer-total-mismatch").textContent).toContain("stated total 540,000 disagrees with its line items (546,000)");
    expect(texts(container, "total-mismatch")).toHaveLength(2);
  });

  it("does not flag totals that agree", async () => {
    const backend = new FakeBackend();
    const diff = fx.offerDiff();
    diff.total.old.mismatch = false;
    diff.total.new.mismatch = false;
    backend.views.set("hash-contoso-5", fx.offerView({ diff }));
    const { container } = await renderOffer(backend);
    expect(container.querySelector("[data-testid='offer-total-mismatch']")).toBeNull();
    expect(container.querySelector("[data-testid='total-mismatch']")).toBeNull();
  });

  it("shows the vendor's identity, fingerprint and both mandates", async () => {
    const { container } = await renderOffer();
    expect(byId(container, "counterparty-fingerprint").textContent).toBe("SHA256:c0nt0s0FiNgErPrInT");
    expect(byId(container, "counterparty-status").textContent).toBe("sandbox");
    expect(byId(container, "counterparty-identity").textContent).toContain("Contoso Negotiation Agent");
    // Words, from the one label map, where the wire has keys and enumerated values.
    expect(byId(container, "envelope-vendor").textContent).toContain("Offer authority binds, with a person's approval");
    expect(byId(container, "envelope-vendor").textContent).not.toContain("bind_with_human_approval");
    expect(byId(container, "envelope-vendor").textContent).not.toContain("offer_authority");
    expect(byId(container, "envelope-vendor").textContent).toContain("renewal pricing; term length");
    expect(byId(container, "envelope-buyer").textContent).toContain("procurement@buyer.example");
  });

  it("states each mandate's agent by name and that it declares itself an AI, never as JSON", async () => {
    const { container } = await renderOffer();
    const vendor = byId(container, "envelope-vendor");
    const agent = vendor.querySelector<HTMLElement>("[data-testid='mandate-agent']")!;
    expect(agent.dataset.declaredAi).toBe("true");
    expect(agent.querySelector("[data-testid='mandate-agent-name']")?.textContent).toBe("Contoso Negotiation Agent");
    expect(agent.textContent).toContain("It declares itself an AI agent.");
    for (const envelope of [vendor, byId(container, "envelope-buyer")]) {
      expect(envelope.textContent).not.toMatch(/[{}"]|declared_ai/);
    }
    expect(container.querySelector("[data-testid='mandate-agent-warning']")).toBeNull();
  });

  it("warns loudly when a mandate's agent does not declare itself an AI", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.offerView({
      vendor_envelope: { ...fx.vendorEnvelope, agent: { name: "Totally Human Sales", declared_ai: false } },
      buyer_envelope: { party: "Buyer Corp", offer_authority: "bind_with_human_approval" },
    }));
    const { container } = await renderOffer(backend);
    const warnings = [...container.querySelectorAll<HTMLElement>("[data-testid='mandate-agent-warning']")];
    expect(warnings).toHaveLength(2);
    expect(warnings[0].getAttribute("role")).toBe("alert");
    expect(warnings[0].textContent).toContain("does NOT declare itself an AI agent (declared_ai is not true)");
    expect(warnings[1].textContent).toContain("(no declared_ai)");
    expect(byId(container, "envelope-vendor").textContent).toContain("Totally Human Sales");
  });

  it("makes each verification state unmistakable", async () => {
    const verified = await renderOffer();
    expect(byId(verified.container, "verification-state").textContent).toContain("Verified");
    verified.unmount();

    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.offerView({
      verification: { state: "unproven", detail: "seq 2 has no signature", failing_seq: null, checks: [] },
    }));
    const unproven = await renderOffer(backend);
    expect(byId(unproven.container, "verification-state").textContent).toContain("Unproven attribution");
    unproven.unmount();

    backend.views.set("hash-contoso-5", fx.offerView({
      verification: { state: "disputed", detail: "log no longer extends the pinned head", failing_seq: 4, checks: ["chain_head mismatch at seq 4"] },
    }));
    const { container } = await renderOffer(backend);
    const banner = byId(container, "verification-state");
    expect(banner.dataset.state).toBe("disputed");
    expect(banner.textContent).toContain("DISPUTED");
    expect(banner.textContent).toContain("seq 4");
    expect(banner.textContent).toContain("chain_head mismatch at seq 4");
    expect(container.querySelector("[data-testid='approve-button']")).toBeNull();
    expect(byId(container, "decline-button")).toBeTruthy();
  });

  it("shows both offers in full, side by side, on request", async () => {
    const { container } = await renderOffer();
    expect(container.querySelector("[data-testid='previous-offer']")).toBeNull();
    byId(container, "show-full-offers").click();
    await settle();
    expect(byId(container, "previous-offer").querySelectorAll("[data-testid='summary-line']")).toHaveLength(3);
    expect(byId(container, "previous-offer").textContent).toContain("Onboarding training");
    expect(byId(container, "current-offer").textContent).toContain("SSO add-on");
    expect(byId(container, "show-full-offers").getAttribute("aria-expanded")).toBe("true");
  });

  it("marks the offer seen once it is open", async () => {
    const { backend } = await renderOffer();
    expect(backend.seen).toEqual([ref]);
  });

  it("shows a first offer on its own and an expired one without decisions", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.offerView({ previous: null, previous_ref: null, diff: null, expired: true }));
    const { container } = await renderOffer(backend);
    expect(container.querySelector("[data-testid='offer-diff']")).toBeNull();
    expect(texts(container, "summary-line")).toHaveLength(3);
    expect(byId(container, "offer-expired").textContent).toBe("EXPIRED");
    expect(byId(container, "expired-notice").textContent).toContain("can no longer be approved");
    expect(container.querySelector("[data-testid='approve-button']")).toBeNull();
  });

  it("explains a failed load", async () => {
    const backend = new FakeBackend();
    backend.views.clear();
    const { container } = await renderOffer(backend);
    expect(byId(container, "load-error").textContent).toBe("That offer is no longer pending.");
  });
});
