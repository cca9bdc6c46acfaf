import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle } from "./helpers";

function selectedVendor(container: HTMLElement): string | null | undefined {
  return container.querySelector("[data-testid='inbox-row'][data-selected='true'] [data-testid='inbox-counterparty']")?.textContent;
}

describe("keyboard", () => {
  it("j/k move through the inbox and Enter opens the selected offer", async () => {
    const user = userEvent.setup();
    const { container } = await renderApp();
    await user.keyboard("j");
    expect(selectedVendor(container)).toBe("Fabrikam Inc");
    await user.keyboard("j");
    expect(selectedVendor(container)).toBe("Contoso GmbH");
    expect(document.activeElement?.getAttribute("data-testid")).toBe("inbox-row");
    await user.keyboard("k");
    await user.keyboard("j");
    await user.keyboard("{Enter}");
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Contoso GmbH");
    expect(document.activeElement?.id).toBe("offer-title");
  });

  it("a, d and c open the decision forms; Escape closes them, then goes back with focus on the row", async () => {
    const user = userEvent.setup();
    const { container, backend } = await renderApp();
    await user.keyboard("jj");
    await user.keyboard("a");
    await settle();
    expect(byId(container, "approve-summary")).toBeTruthy();
    // Focus is on "Confirm approval": Enter would confirm, so Escape is tried first here.
    expect(document.activeElement?.getAttribute("data-testid")).toBe("approve-confirm");
    await user.keyboard("{Escape}");
    await settle();
    expect(container.querySelector("[data-testid='approve-summary']")).toBeNull();
    expect(backend.decided).toEqual([]);
    expect(document.activeElement?.getAttribute("data-testid")).toBe("approve-button");
    await user.keyboard("d");
    await settle();
    expect(document.activeElement?.getAttribute("data-testid")).toBe("decline-reason");
    await user.keyboard("a");
    expect(container.querySelector("[data-testid='approve-summary']")).toBeNull();
    await user.keyboard("{Escape}");
    await user.keyboard("{Escape}");
    expect(container.querySelector("[data-testid='decline-form']")).toBeNull();
    await user.keyboard("c");
    expect(byId(container, "counter-editor")).toBeTruthy();
    await settle();
    // The editor opens with the cursor in its first field: Escape leaves it, closes the form, goes back.
    expect(document.activeElement?.getAttribute("data-testid")).toBe("counter-currency");
    await user.keyboard("{Escape}");
    await user.keyboard("{Escape}");
    await settle();
    expect(container.querySelector("[data-testid='counter-editor']")).toBeNull();
    expect(document.activeElement?.getAttribute("data-testid")).toBe("approve-button");
    await user.keyboard("{Escape}");
    await settle();
    expect(container.querySelector("[data-testid='offer-view']")).toBeNull();
    expect(document.activeElement?.getAttribute("data-testid")).toBe("inbox-row");
    expect(selectedVendor(container)).toBe("Contoso GmbH");
  });

  it("a reload after Escape leaves the focus on the decision buttons, even when the first load came late", async () => {
    // The offer view's first load resolves only after `a` was pressed (a
    // busy machine): it must not take the focus later, on a reload.
    const user = userEvent.setup();
    const backend = new FakeBackend();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const view = fx.offerView();
    backend.views.set("hash-contoso-5", async () => { await gate; return structuredClone(view); });
    const { container } = await renderApp(backend);
    await user.keyboard("jj");
    await user.keyboard("{Enter}");
    await user.keyboard("a");
    release();
    await settle();
    expect(document.activeElement?.getAttribute("data-testid")).toBe("approve-confirm");
    await user.keyboard("{Escape}");
    await settle();
    expect(document.activeElement?.getAttribute("data-testid")).toBe("approve-button");
    // The engine says this offer's data changed: the view reloads.
    backend.emitChanged({ what: "inbox", host_id: view.item.host_id, session_id: view.item.session_id });
    await settle();
    expect(byId(container, "offer-view")).toBeTruthy();
    expect(document.activeElement?.getAttribute("data-testid")).toBe("approve-button");
  });

  it("a shortcut pressed before the first load is dropped when the proposal does not offer it", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const view = fx.offerView();
    view.capabilities = { ...view.capabilities, actions: ["approve", "decline"] };
    backend.views.set("hash-contoso-5", async () => { await gate; return structuredClone(view); });
    const { container } = await renderApp(backend);
    await user.keyboard("jj");
    await user.keyboard("{Enter}");
    await user.keyboard("c");
    release();
    await settle();
    expect(byId(container, "offer-view")).toBeTruthy();
    expect(container.querySelector("[data-testid='counter-button']")).toBeNull();
    // The panel is not stuck in a form it does not show: `a` still opens the approval.
    await user.keyboard("a");
    await settle();
    expect(document.activeElement?.getAttribute("data-testid")).toBe("approve-confirm");
  });

  it("d on an expired proposal that takes no decline opens nothing and leaves j and Escape working", async () => {
    const backend = new FakeBackend();
    // Expired: the engine offers nothing after expiry for this protocol (a gate request).
    backend.views.set("hash-fabrikam-3", fx.offerView({
      item: fx.inboxItems()[1], expired: true,
      capabilities: { ...fx.anpCapabilities, actions: [], after_expiry: [] },
    }));
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("j{Enter}");
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Fabrikam Inc");
    await user.keyboard("d");
    await settle();
    expect(container.querySelector("[data-testid='decline-form']")).toBeNull();
    // No hidden mode: j goes on to the next pending decision at once.
    await user.keyboard("j");
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Contoso GmbH");
    await user.keyboard("k");
    await settle();
    await user.keyboard("d");
    await settle();
    // …and Escape goes back to the inbox at once.
    await user.keyboard("{Escape}");
    await settle();
    expect(byId(container, "inbox")).toBeTruthy();
  });

  it("d on an expired ANP offer opens the late decline its protocol still takes", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-fabrikam-3", fx.offerView({ item: fx.inboxItems()[1], expired: true,
      capabilities: { ...fx.anpCapabilities, actions: ["decline"] } }));
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("j{Enter}");
    await settle();
    expect(byId(container, "expired-notice").textContent).toContain("You can still decline it");
    expect(byId(container, "dismiss-button")).toBeTruthy();
    await user.keyboard("d");
    await settle();
    expect(byId(container, "decline-form")).toBeTruthy();
  });

  it("Enter on the confirmation approves, keyboard only", async () => {
    const user = userEvent.setup();
    const { container, backend } = await renderApp();
    await user.keyboard("jj");
    await user.keyboard("a");
    await settle();
    await user.keyboard("{Enter}");
    await settle();
    expect(backend.decided.map((d) => [d.action, d.in_response_to])).toEqual([["approve", "hash-contoso-5"]]);
    expect(byId(container, "outcome").dataset.tone).toBe("success");
  });

  it("a pressed again confirms the approval, once", async () => {
    const user = userEvent.setup();
    const { backend } = await renderApp();
    await user.keyboard("jj");
    await user.keyboard("a");
    await settle();
    expect(backend.decided).toEqual([]);
    await user.keyboard("a");
    await settle();
    await user.keyboard("a");
    await settle();
    expect(backend.decided.map((d) => d.action)).toEqual(["approve"]);
  });

  it("d, the reason typed, Enter asks to confirm and Enter again declines; Shift+Enter only starts a new line", async () => {
    const user = userEvent.setup();
    const { backend } = await renderApp();
    await user.keyboard("jj");
    await user.keyboard("d");
    await settle();
    await user.keyboard("{Enter}");
    expect(backend.decided).toEqual([]);
    await user.keyboard("Over budget{Shift>}{Enter}{/Shift}for this term{Enter}");
    await settle();
    expect(backend.decided).toEqual([]);
    await user.keyboard("{Enter}");
    await settle();
    expect(backend.decided.map((d) => [d.action, d.reason])).toEqual([["decline", "Over budget\nfor this term"]]);
  });

  it("? shows the help and Escape closes it, giving focus back", async () => {
    const user = userEvent.setup();
    const { container } = await renderApp();
    await user.keyboard("j");
    const row = document.activeElement;
    expect(row?.getAttribute("data-testid")).toBe("inbox-row");
    await user.keyboard("?");
    const help = byId(container.ownerDocument.body, "help-overlay");
    expect(help.getAttribute("role")).toBe("dialog");
    expect(help.textContent).toContain("Approve (asks you to confirm: Enter or a again sends)");
    expect(help.textContent).toContain("Decline (asks for a reason; Enter then asks you to confirm, Enter sends)");
    expect(document.activeElement).toBe(help);
    await user.keyboard("j");
    expect(selectedVendor(container)).toBe("Fabrikam Inc");
    await user.keyboard("{Escape}");
    expect(document.querySelector("[data-testid='help-overlay']")).toBeNull();
    expect(document.activeElement).toBe(row);
  });

  it("keeps Tab inside the help dialog", async () => {
    const user = userEvent.setup();
    const { container } = await renderApp();
    await user.keyboard("?");
    const help = byId(container.ownerDocument.body, "help-overlay");
    const close = byId(container.ownerDocument.body, "help-close");
    await user.tab();
    expect(document.activeElement).toBe(close);
    await user.tab();
    expect(document.activeElement).toBe(close);
    await user.tab({ shift: true });
    expect(document.activeElement).toBe(close);
    expect(help.contains(document.activeElement)).toBe(true);
  });

  it("/ jumps to the history search, where letters are typed, not shortcuts", async () => {
    const user = userEvent.setup();
    const { container, backend } = await renderApp();
    await user.keyboard("/");
    await settle();
    const search = byId<HTMLInputElement>(container, "history-search");
    expect(document.activeElement).toBe(search);
    await user.keyboard("acd");
    await settle();
    expect(search.value).toBe("acd");
    expect(backend.filters.at(-1)).toEqual({ text: "acd" });
    expect(container.querySelector("[data-testid='approve-summary']")).toBeNull();
  });

  it("has landmarks and a labelled navigation", async () => {
    const { container } = await renderApp();
    expect(container.querySelector("header")).not.toBeNull();
    expect(container.querySelector("nav")?.getAttribute("aria-label")).toBe("Sections");
    expect(container.querySelector("main")).not.toBeNull();
  });
});
