import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";
import { itemKey } from "../src/lib/model/inbox";

/** A bound for the tests that render and walk 100+ rows: a loaded 2-core machine takes seconds. */
const HEAVY = 30_000;

describe("inbox", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: fx.NOW, toFake: ["setInterval", "clearInterval", "Date"] });
  });
  afterEach(() => vi.useRealTimers());

  it("lists pending decisions soonest-expiring first with vendor, amount and change", async () => {
    const { container } = await renderApp();
    expect(texts(container, "inbox-counterparty")).toEqual(["Fabrikam Inc", "Contoso GmbH", "Northwind Traders"]);
    expect(texts(container, "inbox-total")).toEqual(["125,000.50 USD", "540,000 USD", "88,000 USD"]);
    const changes = [...container.querySelectorAll<HTMLElement>("[data-testid='change']")];
    expect(changes.map((c) => c.dataset.effect)).toEqual(["worse", "better"]);
    expect(texts(container, "change")[0]).toContain("+5,000.50 (+4.17%) worse");
    expect(texts(container, "change")[1]).toContain("−30,000 (−5.26%) better");
    expect(changes[1].classList.contains("better")).toBe(true);
    expect(texts(container, "inbox-approvals")).toEqual(["1 of 2 approvals", "0 of 1 approval", "0 of 1 approval"]);
  });

  it("lists what waits on you first, then what waits on others, saying on whom", async () => {
    const waitingOnFinance = {
      reason: "Above 10,000 USD: rule 2", rule: 2, policy_version: 1, current_step: 2,
      you_may_approve: false, you_may_decide: false, your_role: null, your_stand_in: null,
      steps: [
        { number: 1, met: true, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
          parts: [{ role: "buyer", required: 1, approved_by: ["ana@buyer.example"], may_act: [], stood_in: [] }] },
        { number: 2, met: false, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
          parts: [{ role: "finance", required: 1, approved_by: [], may_act: ["fay@buyer.example"], stood_in: [] }] },
      ],
    };
    const backend = new FakeBackend();
    backend.items = [
      fx.inboxItem({ counterparty: fx.northwind, session_id: "s-n", event_hash: "h-n" }),
      fx.inboxItem({ counterparty: fx.fabrikam, session_id: "s-f", event_hash: "h-f", waits_on_you: false, chain: waitingOnFinance }),
      fx.inboxItem({ counterparty: fx.contoso, session_id: "s-c", event_hash: "h-c", waits_on_you: false, chain: null }),
    ];
    const { container } = await renderApp(backend);
    // Within each part, soonest expiry first (the same here), then by name.
    expect(texts(container, "inbox-counterparty")).toEqual(["Northwind Traders", "Contoso GmbH", "Fabrikam Inc"]);
    expect(texts(container, "inbox-section")).toEqual(["Waiting on others: each is at a step that waits on someone else"]);
    const heading = byId(container, "inbox-section");
    expect(heading.nextElementSibling?.textContent).toContain("Contoso GmbH");
    expect(texts(container, "inbox-waits-on")).toEqual(["waits on another approver", "waits on finance"]);
  });

  it("says for whom a request waits on you as a stand-in, and nothing on your own", async () => {
    const standingIn = {
      reason: "Above 10,000 USD: rule 2", rule: 2, policy_version: 1, current_step: 2,
      you_may_approve: true, you_may_decide: true, your_role: "finance",
      your_stand_in: { for_person: "fay@buyer.example", delegation: "urn:countersign:delegation:d-1" },
      steps: [
        { number: 1, met: true, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
          parts: [{ role: "buyer", required: 1, approved_by: ["bob@buyer.example"], may_act: [], stood_in: [] }] },
        { number: 2, met: false, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
          parts: [{ role: "finance", required: 1, approved_by: [], may_act: ["fay@buyer.example", "ana@buyer.example"], stood_in: [] }] },
      ],
    };
    const backend = new FakeBackend();
    backend.items = [
      fx.inboxItem({ counterparty: fx.northwind, session_id: "s-n", event_hash: "h-n" }),
      fx.inboxItem({ counterparty: fx.fabrikam, session_id: "s-f", event_hash: "h-f", chain: standingIn }),
    ];
    const { container } = await renderApp(backend);
    expect(texts(container, "inbox-stand-in")).toEqual(["for fay@buyer.example"]);
    expect(container.querySelector("[data-testid='inbox-section']")).toBeNull();
  });

  it("adds no section when everything waits on you", async () => {
    const { container } = await renderApp();
    expect(container.querySelector("[data-testid='inbox-section']")).toBeNull();
    expect(container.querySelector("[data-testid='inbox-waits-on']")).toBeNull();
  });

  it("shows a vendor's change against its own previous offer, and the gap to our last counter apart", async () => {
    // Northwind cut 547,000 → 536,000 after our 500,000 counter: the engine compares with their
    // previous offer (better for the buyer) and reports our counter as a gap, not as the change.
    const backend = new FakeBackend();
    backend.items = [fx.inboxItem({
      counterparty: fx.northwind, amount: fx.usd("536000"), previous_amount: fx.usd("547000"),
      change: { absolute: "-11000", percent: "-2.01", effect: "better" },
      gap: { seq: 5, ours: fx.usd("500000"), change: { absolute: "36000", percent: "7.20", effect: null } },
    })];
    const { container } = await renderApp(backend);
    const change = byId(container, "change");
    expect(change.dataset.effect).toBe("better");
    expect(change.textContent).toContain("−11,000 (−2.01%) better");
    expect(change.textContent).not.toContain("WORSE");
    expect(byId(container, "inbox-gap").textContent).toBe("36,000 USD (7.20%) above our last counter (seq 5, 500,000 USD)");
  });

  it("lists expired proposals in their own section, each with Dismiss, and dismissing one puts it away", async () => {
    const backend = new FakeBackend();
    backend.expiredItems = [fx.inboxItem({
      session_id: "s-tailspin", event_hash: "hash-tailspin-3", counterparty: { ...fx.northwind, organization: "Tailspin Toys" },
      expires_at: "2026-11-29T09:00:00Z",
    })];
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    const { container } = await renderApp(backend);
    // Not among the pending rows, nor counted as pending.
    expect(texts(container, "inbox-counterparty")).not.toContain("Tailspin Toys");
    expect(byId(container, "inbox-count").textContent).toBe("3 pending");
    expect(texts(container, "expired-counterparty")).toEqual(["Tailspin Toys"]);
    await user.click(byId(container, "expired-dismiss"));
    await settle();
    expect(backend.dismissed).toEqual([{ host_id: "h-sandbox", session_id: "s-tailspin", event_hash: "hash-tailspin-3" }]);
    expect(container.querySelector("[data-testid='inbox-expired']")).toBeNull();
  });

  it("keeps a session's pending items together: the vendor's counter and our agent's draft answering it", async () => {
    const backend = new FakeBackend();
    // As the engine sends them: one session's items together, after its soonest.
    backend.items = [
      fx.inboxItem({ session_id: "s-northwind", event_hash: "nw-6", counterparty: fx.northwind, expires_at: "2026-11-29T13:00:00Z" }),
      fx.inboxItem({ session_id: "s-northwind", event_hash: "nw-draft", counterparty: fx.northwind, actor: "buyer", side: "ours",
        is_draft: true, expires_at: "2026-11-29T13:00:00Z" }),
      fx.inboxItem({ session_id: "s-contoso", event_hash: "co-5", expires_at: "2026-11-29T14:00:00Z" }),
    ];
    const { container } = await renderApp(backend);
    const rows = [...container.querySelectorAll<HTMLElement>("[data-testid='inbox-item']")];
    expect(rows.map((r) => r.dataset.grouped)).toEqual(["false", "true", "false"]);
    expect(byId(rows[0], "session-group").textContent).toBe("2 pending in this session");
    expect(byId(rows[1], "same-session").textContent).toBe("same session as above");
    expect(rows[2].querySelector("[data-testid='session-group']")).toBeNull();
  });

  it("marks drafts by the buyer agent, held offers and unproven sessions", async () => {
    const { container } = await renderApp();
    const rows = [...container.querySelectorAll<HTMLElement>("[data-testid='inbox-row']")];
    expect(rows[2].querySelector("[data-testid='draft-marker']")?.textContent).toBe("draft by buyer agent");
    expect(rows[2].querySelector("[data-testid='held-reason']")?.textContent).toBe("held: screening unavailable");
    expect(rows[2].querySelector("[data-testid='verification-badge']")?.textContent).toBe("unproven");
    expect(rows[0].querySelector("[data-testid='draft-marker']")).toBeNull();
    // A draft has no seq on the log yet; a sent offer does.
    expect(rows[2].querySelector(".kind")?.textContent).toBe("counter-offer · draft, not sent");
    expect(rows[0].querySelector(".kind")?.textContent).toMatch(/^(offer|counter-offer) · seq \d+$/);
  });

  it("says \"unverified\" beside a counterparty whose name no admin verified, in the row and the offer", async () => {
    const backend = new FakeBackend();
    const unverified = fx.inboxItem({ counterparty: { ...fx.contoso, organization: "Contoso GmbH", verified: false } });
    backend.items = [unverified];
    const { container } = await renderApp(backend);
    const row = byId(container, "inbox-row");
    expect(texts(row, "inbox-counterparty")).toEqual(["Contoso GmbH"]);
    expect(texts(row, "inbox-counterparty-unverified")).toEqual(["unverified"]);
    const verified = await renderApp();
    expect(verified.container.querySelector("[data-testid='inbox-counterparty-unverified']")).toBeNull();
  });

  it("asks the engine for a page of rows at a time, soonest expiries first, and j reaches past the page", async () => {
    const backend = new FakeBackend();
    backend.items = Array.from({ length: 120 }, (_, i) => fx.inboxItem({
      session_id: `s-${i}`, event_hash: `hash-${i}`,
      expires_at: new Date(fx.NOW + (i + 1) * 60_000).toISOString(),
    }));
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    const { container } = await renderApp(backend);
    // The webview holds the rows on screen, not the whole inbox.
    expect(backend.inboxQueries.at(-1)).toEqual({ limit: 50 });
    expect(byId(container, "inbox-count").textContent).toBe("120 pending");
    expect(container.querySelectorAll("[data-testid='inbox-row']")).toHaveLength(50);
    expect(byId(container, "inbox-more").textContent).toBe("Show 50 more (70 not shown, expiring later)");
    // Keyboard: j past the last row fetches the next page and selects its first row.
    for (let i = 0; i < 51; i++) await user.keyboard("j");
    await settle();
    expect(backend.inboxQueries.at(-1)).toEqual({ limit: 100 });
    const rows = container.querySelectorAll("[data-testid='inbox-row']");
    expect(rows).toHaveLength(100);
    expect(rows[50].getAttribute("data-selected")).toBe("true");
    expect(document.activeElement).toBe(rows[50]);
    await user.click(byId(container, "inbox-more"));
    await settle();
    expect(container.querySelectorAll("[data-testid='inbox-row']")).toHaveLength(120);
    expect(container.querySelector("[data-testid='inbox-more']")).toBeNull();
  }, HEAVY);

  it("keeps an offer opened from a notification in the rows, however far down it expires", async () => {
    const backend = new FakeBackend();
    backend.items = Array.from({ length: 150 }, (_, i) => fx.inboxItem({
      session_id: `s-${i}`, event_hash: `hash-${i}`,
      expires_at: new Date(fx.NOW + (i + 1) * 60_000).toISOString(),
    }));
    const { container } = await renderApp(backend);
    const far = { host_id: "h-sandbox", session_id: "s-140", event_hash: "hash-140" };
    backend.emitOpenOffer(far);
    await settle();
    expect(backend.inboxQueries.at(-1)).toEqual({ limit: 50, through: far });
    await userEvent.setup({ advanceTimers: vi.advanceTimersByTime }).keyboard("{Escape}");
    await settle();
    let rows = container.querySelectorAll("[data-testid='inbox-row']");
    expect(rows).toHaveLength(141);
    expect(rows[140].getAttribute("data-selected")).toBe("true");
    expect(document.activeElement).toBe(rows[140]);
    // Later fetches keep it.
    backend.emitChanged({ what: "inbox" });
    await settle();
    rows = container.querySelectorAll("[data-testid='inbox-row']");
    expect(rows).toHaveLength(141);
  }, HEAVY);

  it("folds a burst of engine events into one more inbox fetch", async () => {
    const backend = new FakeBackend();
    const { container } = await renderApp(backend);
    const releases: (() => void)[] = [];
    backend.items = () => new Promise((resolve) => releases.push(() => resolve(fx.inboxItems().slice(0, 1))));
    const before = backend.inboxCalls;
    for (let i = 0; i < 10; i++) backend.emitChanged({ what: "inbox" });
    await settle();
    expect(backend.inboxCalls - before).toBe(1);
    releases.shift()!();
    await settle();
    expect(backend.inboxCalls - before).toBe(2);
    releases.shift()!();
    await settle();
    expect(backend.inboxCalls - before).toBe(2);
    expect(texts(container, "inbox-counterparty")).toHaveLength(1);
  });

  it("counts down every second and shows expired", async () => {
    const { container } = await renderApp();
    expect(texts(container, "countdown")).toEqual(["45 s", "2 h 5 min", "2 d 21 h"]);
    vi.advanceTimersByTime(1000);
    await settle();
    expect(texts(container, "countdown")[0]).toBe("44 s");
    vi.advanceTimersByTime(44_000);
    await settle();
    expect(texts(container, "countdown")[0]).toBe("expired");
    expect(byId(container, "countdown").dataset.expired).toBe("true");
  });

  it("puts the decisions waiting on you in the window title, read or not, and follows engine://changed", async () => {
    const backend = new FakeBackend();
    const { container } = await renderApp(backend);
    expect(document.title).toBe("(3) Countersign");
    backend.items = fx.inboxItems().map((item) => ({ ...item, unread: false })).slice(1);
    backend.emitChanged({ what: "inbox" });
    await settle();
    expect(document.title).toBe("(2) Countersign");
    expect(texts(container, "inbox-counterparty")).toEqual(["Fabrikam Inc", "Northwind Traders"]);
    // Approved here and waiting only on another approver: no longer on you.
    backend.approvedByMe.add(itemKey(fx.inboxItems()[1]));
    backend.emitChanged({ what: "inbox" });
    await settle();
    expect(document.title).toBe("(1) Countersign");
    backend.items = [];
    backend.emitChanged({ what: "inbox" });
    await settle();
    expect(document.title).toBe("Countersign");
  });

  it("says so when nothing is pending", async () => {
    const backend = new FakeBackend();
    backend.items = [];
    const { container } = await renderApp(backend);
    expect(byId(container, "inbox-empty").textContent).toContain("Nothing is waiting for you");
  });

  it("shows a load failure as a sentence", async () => {
    const backend = new FakeBackend();
    backend.items = new Error("The console's store could not be opened.");
    const { container } = await renderApp(backend);
    expect(byId(container, "app-error").textContent).toBe("The console's store could not be opened.");
  });

  it("opens an offer on click and when a notification asks for it", async () => {
    vi.useFakeTimers({ now: fx.NOW, toFake: ["Date"] });
    const user = userEvent.setup();
    const backend = new FakeBackend();
    const { container } = await renderApp(backend);
    expect(document.title).toBe("(3) Countersign");
    await user.click(container.querySelectorAll<HTMLElement>("[data-testid='inbox-row']")[1]);
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Contoso GmbH");
    expect(byId(container, "unread-count").textContent).toBe("1 new");
    expect(document.title, "opened, it still waits on you").toBe("(3) Countersign");
    expect(backend.seen).toEqual([{ host_id: "h-sandbox", session_id: "s-contoso", event_hash: "hash-contoso-5" }]);
    await user.click(byId(container, "back-button"));
    await settle();
    expect(container.querySelector("[data-testid='offer-view']")).toBeNull();
    backend.emitOpenOffer({ host_id: "h-sandbox", session_id: "s-contoso", event_hash: "hash-contoso-5" });
    await settle();
    expect(byId(container, "offer-view")).toBeTruthy();
  });

  it("opens a notification's Approve… at the confirmation and its Decline… at the reason, signing nothing", async () => {
    vi.useFakeTimers({ now: fx.NOW, toFake: ["Date"] });
    const backend = new FakeBackend();
    const fabrikam = fx.inboxItems()[1];
    backend.views.set(fabrikam.event_hash, fx.offerView({ item: fabrikam }));
    const { container } = await renderApp(backend);
    const contoso = { host_id: "h-sandbox", session_id: "s-contoso", event_hash: "hash-contoso-5" };
    backend.emitOpenOffer(contoso, "approve");
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Contoso GmbH");
    expect(document.activeElement).toBe(byId(container, "approve-confirm"));
    expect(backend.decided).toEqual([]);
    // From the inbox, another notification's Decline…: the reason box has the keys.
    await userEvent.setup().keyboard("{Escape}{Escape}");
    await settle();
    backend.emitOpenOffer({ host_id: "h-sandbox", session_id: "s-fabrikam", event_hash: "hash-fabrikam-3" }, "decline");
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Fabrikam Inc");
    expect(document.activeElement).toBe(byId(container, "decline-reason"));
    expect(backend.decided).toEqual([]);
  });
});
