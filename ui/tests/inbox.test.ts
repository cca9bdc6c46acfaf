import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";

describe("inbox", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: fx.NOW, toFake: ["setInterval", "clearInterval", "Date"] });
  });
  afterEach(() => vi.useRealTimers());

  it("lists pending decisions soonest-expiring first with vendor, amount and change", async () => {
    const { container } = await renderApp();
    expect(texts(container, "inbox-vendor")).toEqual(["Fabrikam Inc", "Contoso GmbH", "Northwind Traders"]);
    expect(texts(container, "inbox-total")).toEqual(["125,000.50 USD", "540,000 USD", "88,000 USD"]);
    const changes = [...container.querySelectorAll<HTMLElement>("[data-testid='change']")];
    expect(changes.map((c) => c.dataset.effect)).toEqual(["worse", "better"]);
    expect(texts(container, "change")[0]).toContain("+5,000.50 (+4.17%) worse");
    expect(texts(container, "change")[1]).toContain("−30,000 (−5.26%) better");
    expect(changes[1].classList.contains("better")).toBe(true);
    expect(texts(container, "inbox-approvals")).toEqual(["1 of 2 approvals", "0 of 1 approval", "0 of 1 approval"]);
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

  it("counts down every second and shows expired", async () => {
    const { container } = await renderApp();
    expect(texts(container, "countdown")).toEqual(["45s", "2h 05m", "2d 21h"]);
    vi.advanceTimersByTime(1000);
    await settle();
    expect(texts(container, "countdown")[0]).toBe("44s");
    vi.advanceTimersByTime(44_000);
    await settle();
    expect(texts(container, "countdown")[0]).toBe("expired");
    expect(byId(container, "countdown").dataset.expired).toBe("true");
  });

  it("puts the unread count in the window title and follows engine://changed", async () => {
    const backend = new FakeBackend();
    const { container } = await renderApp(backend);
    expect(document.title).toBe("(2) Countersign");
    backend.items = fx.inboxItems().map((item) => ({ ...item, unread: false })).slice(1);
    backend.emitChanged({ what: "inbox" });
    await settle();
    expect(document.title).toBe("Countersign");
    expect(texts(container, "inbox-vendor")).toEqual(["Fabrikam Inc", "Northwind Traders"]);
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
    expect(document.title).toBe("(2) Countersign");
    await user.click(container.querySelectorAll<HTMLElement>("[data-testid='inbox-row']")[1]);
    await settle();
    expect(byId(container, "offer-vendor").textContent).toBe("Contoso GmbH");
    expect(document.title).toBe("(1) Countersign");
    expect(backend.seen).toEqual([{ host_id: "h-sandbox", session_id: "s-contoso", event_hash: "hash-contoso-5" }]);
    await user.click(byId(container, "back-button"));
    await settle();
    expect(container.querySelector("[data-testid='offer-view']")).toBeNull();
    backend.emitOpenOffer({ host_id: "h-sandbox", session_id: "s-contoso", event_hash: "hash-contoso-5" });
    await settle();
    expect(byId(container, "offer-view")).toBeTruthy();
  });
});
