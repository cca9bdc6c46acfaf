import { describe, expect, it, vi } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle } from "./helpers";

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A backend whose soonest-expiring offer (the inbox's first row) has a view. */
async function backendWithFirstView() {
  const backend = new FakeBackend();
  const [first] = (await backend.inbox({ limit: 1 })).items;
  backend.views.set(first.event_hash, fx.offerView());
  return { backend, first };
}

/** Records every rehearsal container the app adds, as it was when added. */
function watchRehearsals(container: HTMLElement) {
  const seen: { hidden: string | null; inert: boolean }[] = [];
  const observer = new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node instanceof HTMLElement && node.dataset.testid === "offer-rehearsal") {
          seen.push({ hidden: node.getAttribute("aria-hidden"), inert: node.hasAttribute("inert") });
        }
      }
    }
  });
  observer.observe(container, { childList: true, subtree: true });
  return { seen, stop: () => observer.disconnect() };
}

describe("offer view rehearsal", () => {
  it("builds the first row's offer view once, out of sight, without marking it seen, then drops it", async () => {
    const { backend, first } = await backendWithFirstView();
    const { container } = await renderApp(backend, 20);
    const watch = watchRehearsals(container);
    const unreadBefore = byId(container, "unread-count").textContent;
    await vi.waitFor(() => {
      expect(watch.seen).toHaveLength(1);
      expect(container.querySelector("[data-testid='offer-rehearsal']")).toBeNull();
    }, { timeout: 3000, interval: 20 });
    await settle();
    watch.stop();

    expect(watch.seen).toEqual([{ hidden: "true", inert: true }]);
    expect(backend.viewed).toEqual([{ host_id: first.host_id, session_id: first.session_id, event_hash: first.event_hash }]);
    expect(backend.seen).toEqual([]);
    expect(byId(container, "unread-count").textContent).toBe(unreadBefore);
    expect(container.querySelector("[data-testid='offer-rehearsal']")).toBeNull();
    expect(container.querySelectorAll("[data-testid='offer-view']")).toHaveLength(0);
    // Once only: more quiet time rehearses nothing more.
    await wait(60);
    expect(backend.viewed).toHaveLength(1);
  });

  it("never happens when an offer is opened first, and the real open still marks it seen", async () => {
    const { backend, first } = await backendWithFirstView();
    const user = userEvent.setup();
    const { container } = await renderApp(backend, 400);
    await user.keyboard("{Enter}");
    await settle();
    expect(byId(container, "offer-view")).toBeTruthy();
    expect(backend.viewed).toHaveLength(1);
    // Back on the inbox for longer than the quiet time: the view is warm already.
    await user.keyboard("{Escape}");
    await settle();
    expect(container.querySelector("[data-testid='offer-view']")).toBeNull();
    await wait(600);
    await settle();
    expect(backend.viewed).toHaveLength(1);
    expect(backend.seen.map((ref) => ref.event_hash)).toEqual([first.event_hash]);
    expect(container.querySelector("[data-testid='offer-rehearsal']")).toBeNull();
  });

  it("waits for a pending offer: an empty inbox rehearses nothing", async () => {
    const backend = new FakeBackend();
    backend.items = [];
    await renderApp(backend, 10);
    await wait(60);
    await settle();
    expect(backend.viewed).toEqual([]);
  });

  it("a rehearsal whose offer cannot be read ends quietly", async () => {
    const backend = new FakeBackend();
    backend.views.clear();
    const { container } = await renderApp(backend, 10);
    await vi.waitFor(() => expect(backend.viewed).toHaveLength(1), { timeout: 3000, interval: 20 });
    await vi.waitFor(() => expect(container.querySelector("[data-testid='offer-rehearsal']")).toBeNull(),
      { timeout: 3000, interval: 20 });
    expect(container.querySelector("[data-testid='app-error']")).toBeNull();
  });
});
