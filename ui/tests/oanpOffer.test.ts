/**
 * An OANP offer the org's buyer agent asks about before offer.accept: the
 * offer beside the one it answers (price and change, inclusions added and
 * removed), the arbiter's latest verdict and suggested price, the rounds
 * left, the unsigned-envelopes notice; the counter editor sends OANP terms
 * in exact minor units.
 */
import { describe, expect, it } from "vitest";
import { render } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import ProposalView from "../src/lib/views/ProposalView.svelte";
import { counterTerms, toMinor } from "../src/lib/protocols/oanp/model";
import { FakeBackend } from "./fakeBackend";
import type { OanpTermsDiff } from "../src/lib/backend";
import { oanpOfferView } from "./oanpFixtures";
import { byId, settle, texts } from "./helpers";

/** The engine's diff of a 405.50 USD counter with warranty and cable against the 419.00 USD offer. */
function countered(): OanpTermsDiff & { proposal_kind: "oanp_offer" } {
  const usd = (minor: string, value: string) => ({ amount_minor: minor, currency: "USD", amount: { value, currency: "USD" } });
  return {
    proposal_kind: "oanp_offer",
    old: { price: usd("41900", "419.00"), inclusions: [{ kind: "warranty", value: "included" }] },
    new: { price: usd("40550", "405.50"), inclusions: [{ kind: "warranty", value: "included" }, { kind: "cable", value: "included" }] },
    price_change: { absolute: "-13.5", percent: "-3.22", effect: "better" },
    inclusions_added: [{ kind: "cable", value: "included" }],
    inclusions_removed: [],
  };
}

const ref = { host_id: "h-sandbox", session_id: "oanp:ses_monitor", event_hash: "sha256:6e6e" };

async function renderOffer(view = oanpOfferView()) {
  const backend = new FakeBackend();
  backend.views.set(ref.event_hash, view);
  const result = render(ProposalView, { props: { backend, proposalRef: ref, onBack: () => {} } });
  await settle();
  return { ...result, backend };
}

describe("an OANP offer", () => {
  it("shows the offer beside the one it answers, the arbiter's verdict and the rounds left", async () => {
    const { container } = await renderOffer();
    expect(byId(container, "offer-view").dataset.kind).toBe("oanp_offer");
    expect(texts(container, "offer-protocol")).toEqual(["OANP"]);
    expect(byId(container, "oanp-price").textContent).toBe("419.00 USD");
    expect(byId(container, "oanp-previous-price").textContent).toBe("399.00 USD");
    expect(byId(container, "oanp-price-change").textContent).toMatch(/^Price \+20 \(\+5\.01%\)$/);
    expect(texts(container, "oanp-inclusion-added")).toEqual(["+ warranty (included)"]);
    expect(texts(container, "oanp-inclusion-removed")).toEqual(["− cable (included)"]);
    expect(byId(container, "oanp-verdict").textContent).toContain("fair");
    expect(byId(container, "oanp-score").textContent).toBe("1.0000");
    expect(byId(container, "oanp-suggested").textContent).toBe("Suggested price: 415.00 USD");
    expect(byId(container, "oanp-rounds-left").textContent).toBe("3 of 5 rounds left");
    expect(byId(container, "oanp-unsigned-notice").textContent).toContain("not signed");
    expect(byId(container, "oanp-envelope-hash").textContent).toBe("sha256:6e6e");
  });

  it("keeps hostile inclusion text literal", async () => {
    const hostile = "<img src=x onerror=alert(1)>";
    const base = oanpOfferView();
    const detail = base.detail as Extract<typeof base.detail, { proposal_kind: "oanp_offer" }>;
    const { container } = await renderOffer(oanpOfferView({
      inclusions_added: [{ kind: hostile, value: null }],
      offer: { ...detail.offer, terms: { ...detail.offer.terms, inclusions: [{ kind: hostile, value: null }] } },
    }));
    expect(container.querySelector("img")).toBeNull();
    expect(byId(container, "oanp-inclusions").textContent).toBe(hostile);
  });

  it("counters with OANP terms in exact minor units, checked by the engine first", async () => {
    const user = userEvent.setup();
    const { container, backend } = await renderOffer();
    backend.counterCheck = { ok: true, errors: [], diff: countered() };
    await user.click(byId(container, "counter-button"));
    await settle();
    expect(byId(container, "counter-editor").dataset.form).toBe("oanp_terms");
    const price = byId<HTMLInputElement>(container, "counter-price");
    expect(price.value).toBe("419.00");
    await user.clear(price);
    await user.type(price, "405.5");
    const kinds = byId<HTMLInputElement>(container, "counter-inclusions");
    await user.clear(kinds);
    await user.type(kinds, "warranty, cable");
    await user.type(byId(container, "counter-reason"), "Meet the arbiter halfway.");
    await user.click(byId(container, "counter-validate"));
    await settle();
    const sent = { price: { amount_minor: 40550, currency: "USD" }, inclusions: [{ kind: "warranty", value: "included" }, { kind: "cable", value: "included" }] };
    expect(backend.validated).toEqual([sent]);
    // The engine's diff of what will be sent, beside their offer (not the raw terms).
    const preview = byId(container, "counter-preview");
    expect(preview.textContent).not.toContain("amount_minor");
    expect(byId(preview, "oanp-diff-old-price").textContent).toBe("419.00 USD");
    expect(byId(preview, "oanp-diff-new-price").textContent).toBe("405.50 USD");
    expect(byId(preview, "oanp-diff-price-change").textContent).toBe("Price −13.5 (−3.22%)");
    expect(texts(preview, "oanp-diff-added")).toEqual(["added: cable (included)"]);
    await user.click(byId(container, "counter-submit"));
    await settle();
    expect(backend.decided).toEqual([]);
    expect(byId(container, "confirm-to").textContent).toContain("To our agent, which sends");
    await user.click(byId(container, "confirm-send"));
    await settle();
    expect(backend.decided).toHaveLength(1);
    expect(backend.decided[0]).toMatchObject({ action: "counter", counter: sent, reason: "Meet the arbiter halfway." });
  });
});

describe("a decided OANP counter", () => {
  it("shows the terms offered instead beside the offer, inclusions as text", async () => {
    const hostile = "<img src=x onerror=alert(1)>";
    const diff = countered();
    diff.new.inclusions.push({ kind: hostile, value: null });
    diff.inclusions_added.push({ kind: hostile, value: null });
    const { container } = await renderOffer({ ...oanpOfferView(), pending: false, decision: {
      action: "counter", outcome: "decided", decided_by: "Grace Hopper (grace@buyer.example)", at: "2026-11-29T11:30:00Z",
      decision_id: null, appended: null, reason: "Meet the arbiter halfway.", breach: null, countered: diff,
      detail: "The host recorded a decline with terms to offer instead, for the org's agent.",
    } });
    const shown = byId(container, "decision-countered");
    expect(byId(shown, "oanp-diff-new-price").textContent).toBe("405.50 USD");
    expect(texts(shown, "oanp-diff-added")).toEqual(["added: cable (included)", `added: ${hostile}`]);
    expect(container.querySelector("[data-testid='decision-countered'] img")).toBeNull();
    expect(texts(container, "decision-by")).toEqual(["Grace Hopper (grace@buyer.example)"]);
  });

  it("shows no terms for a decline", async () => {
    const { container } = await renderOffer({ ...oanpOfferView(), pending: false, decision: {
      action: "decline", outcome: "decided", decided_by: "grace@buyer.example", at: "2026-11-29T11:30:00Z",
      decision_id: null, appended: null, reason: "No.", breach: null, countered: null, detail: "The host recorded a decline.",
    } });
    expect(byId(container, "decision-summary").dataset.action).toBe("decline");
    expect(container.querySelector("[data-testid='decision-countered']")).toBeNull();
  });
});

describe("OANP counter terms", () => {
  it("turn a typed price into minor units by string arithmetic, refusing what is not exact", () => {
    expect(toMinor("405.5", 2)).toBe("40550");
    expect(toMinor("0.07", 2)).toBe("7");
    expect(toMinor("5270", 0)).toBe("5270");
    expect(toMinor("405.555", 2)).toBeNull();
    expect(toMinor("0", 2)).toBeNull();
    expect(toMinor("-5", 2)).toBeNull();
    expect(toMinor("1e3", 2)).toBeNull();
    const offer = { price: { amount_minor: "41900", currency: "USD", amount: { value: "419.00", currency: "USD" } }, inclusions: [] };
    expect(counterTerms("4.001", "", offer)).toBe("The price is an amount with at most 2 decimals, more than zero.");
  });
});
