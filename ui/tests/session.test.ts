/**
 * A session's page in History (issue 27, items 11 to 13): the agreed terms
 * whole, in words; each timeline entry opens to its message as data; the
 * chart of a session without prices says what was agreed; identifiers wrap
 * at sensible points; the decision toast floats over the page.
 */
import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import type { SessionDetail } from "../src/lib/backend";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";
import { breakPieces } from "../src/lib/model/breaks";
import { sessionWords } from "../src/lib/protocols";
import { kindLabel, label, termLabel, valueLabel } from "../src/lib/model/labels";

async function openSession(detail: SessionDetail = fx.concordiaSessionDetail()) {
  const backend = new FakeBackend();
  backend.rows = [detail.row];
  backend.detail = detail;
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  await user.click(byId(rendered.container, "nav-history"));
  await settle();
  await user.click(byId(rendered.container, "history-row"));
  await settle();
  return { ...rendered, backend, user };
}

describe("the agreed terms, whole", () => {
  it("lists every agreed term in words, with who accepted what and when", async () => {
    const { container } = await openSession();
    const panel = byId(container, "agreed-terms");
    expect(texts(container, "agreed-term-name")).toEqual(["Delivery date", "Payment terms", "Price", "Quantity", "Warranty (months)"]);
    expect(texts(container, "agreed-term-value")).toEqual(["2027-03-01", "Net 30", "42500", "500", "24"]);
    expect(byId(container, "agreed-summary").textContent).toMatch(/^We accepted #8 at #9, Mon 30 Nov, \d\d:09: Counter-offer: 42,500 USD$/);
    expect(panel.textContent).not.toContain("payment_terms");
  });

  it("says nothing was agreed by leaving the section out of an open session", async () => {
    const { container } = await openSession(fx.sessionDetail());
    expect(container.querySelector("[data-testid='agreed-terms']")).toBeNull();
  });

  it("shows a hostile term as text, never markup", async () => {
    const detail = fx.concordiaSessionDetail();
    detail.agreed!.terms = [{ name: "terms.<b>notes</b>.value", value: "<img src=x onerror=alert(1)>" }];
    const { container } = await openSession(detail);
    expect(texts(container, "agreed-term-value")).toEqual(["<img src=x onerror=alert(1)>"]);
    expect(byId(container, "agreed-terms").querySelector("img, b")).toBeNull();
  });
});

describe("timeline rows open to their message", () => {
  it("opens on a click and on Enter, showing the message's content as data", async () => {
    const detail = fx.concordiaSessionDetail();
    detail.timeline[7] = { ...detail.timeline[7], payload: { terms: { price: { value: 42500 } }, note: "<script>alert(1)</script>" } };
    const { container, user } = await openSession(detail);
    expect(container.querySelector("[data-testid='timeline-message']")).toBeNull();
    const opens = container.querySelectorAll<HTMLButtonElement>("[data-testid='timeline-open']");
    await user.click(opens[7]);
    await settle();
    const message = byId(container, "timeline-message");
    expect(message.textContent).toContain('"value": 42500');
    expect(message.textContent).toContain('"note": "<script>alert(1)</script>"');
    expect(message.querySelector("script")).toBeNull();
    expect(opens[7].getAttribute("aria-expanded")).toBe("true");
    // Enter on another row's button opens that one instead (and the app's own Enter does nothing else).
    opens[2].focus();
    await user.keyboard("{Enter}");
    await settle();
    expect(container.querySelectorAll("[data-testid='timeline-message']")).toHaveLength(1);
    expect(opens[2].getAttribute("aria-expanded")).toBe("true");
    expect(byId(container, "session-view")).toBeTruthy();
    // And again closes it.
    await user.keyboard("{Enter}");
    await settle();
    expect(container.querySelector("[data-testid='timeline-message']")).toBeNull();
  });
});

describe("the chart of a session without prices", () => {
  it("says what an ANEX session agreed instead of 'No offers yet.'", async () => {
    const detail = fx.concordiaSessionDetail();
    const anex: SessionDetail = {
      ...detail,
      row: { ...detail.row, protocol: "anex", last_amount: null },
      series: { counterparty: [], ours: [] },
      agreed: {
        proposal_seq: null, accept_seq: 4, accepted_at: "2026-11-30T10:04:00Z", accepted_by: "counterparty",
        summary: "Accepted terms: legal_name, tax_id, ap_contact; promises: no retention beyond 90 days",
        terms: [{ name: "data.legal_name", value: "required" }, { name: "promises[0]", value: "no retention beyond 90 days" }],
      },
    };
    const { container } = await openSession(anex);
    const chart = byId(container, "totals-chart");
    expect(chart.textContent).not.toContain("No offers yet.");
    expect(byId(container, "series-agreed-words").textContent).toBe(
      "No prices in this session. Agreed at #4: Accepted terms: legal_name, tax_id, ap_contact; promises: no retention beyond 90 days");
    expect(texts(container, "agreed-term-name")).toEqual(["Data · Legal name", "Promise 1"]);
  });
});

describe("one vocabulary", () => {
  it("has one label map for keys and enumerated values, and keeps unknown keys readable", () => {
    expect(label("payment_terms")).toBe("Payment terms");
    expect(label("some_new_key")).toBe("Some new key");
    expect(valueLabel("bind_with_human_approval")).toBe("binds, with a person's approval");
    expect(valueLabel("Net 30")).toBe("Net 30");
    expect(termLabel("line_items[0].unit_price")).toBe("Line item 1 · Unit price");
    expect(termLabel("terms.price.currency")).toBe("Price · Currency");
    expect(termLabel("value")).toBe("Value");
  });

  it("names each protocol's message kinds in words, keeping the wire's kind beside them", async () => {
    expect(kindLabel("counter_offer", sessionWords("ANP/0.1").kinds)).toBe("Counter-offer");
    expect(kindLabel("negotiate.accept", sessionWords("concordia").kinds)).toBe("Accept");
    expect(kindLabel("session.agree", sessionWords("oanp").kinds)).toBe("Agreement");
    expect(kindLabel("ACCEPT-PROPOSAL", sessionWords("anex").kinds)).toBe("Proposal accepted");
    expect(kindLabel("offer.something_new")).toBe("Offer something new");
    const { container } = await openSession(fx.sessionDetail());
    const cells = [...container.querySelectorAll<HTMLElement>("[data-testid='timeline-kind']")];
    expect(cells.map((c) => c.textContent)).toEqual(["Session opened", "Offer", "Message", "Counter-offer", "Counter-offer"]);
    expect(cells.map((c) => c.dataset.kind)).toEqual(["session_open", "offer", "message", "counter_offer", "counter_offer"]);
    expect(byId(container, "timeline").textContent).not.toContain("counter_offer");
  });
});

describe("long identifiers", () => {
  it("break after separators and in groups of eight, never changing the text", () => {
    const did = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK";
    const pieces = breakPieces(did);
    expect(pieces.join("")).toBe(did);
    expect(pieces.slice(0, 3)).toEqual(["did:", "key:", "z6MkhaXg"]);
    expect(pieces.every((p) => p.length <= 9)).toBe(true);
    expect(breakPieces("https://negotiate.example.com/a2a/org")).toEqual(["https://", "negotiate.", "example.", "com/", "a2a/", "org"]);
  });

  it("are shown whole as their tooltip, wrapping only where a <wbr> allows", async () => {
    const { container } = await openSession(fx.sessionDetail());
    const fingerprint = container.querySelector<HTMLElement>("header [data-long-id]")!;
    expect(fingerprint.textContent).toBe(fx.contoso.fingerprint);
    expect(fingerprint.getAttribute("title")).toBe(fx.contoso.fingerprint);
    expect(fingerprint.querySelectorAll("wbr").length).toBe(breakPieces(fx.contoso.fingerprint).length - 1);
  });
});
