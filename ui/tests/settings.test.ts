/**
 * The settings screen is drawn from what the engine declares: one control
 * per setting kind, each saved as it is changed, refusals in the engine's
 * words beside the field, and the approver with the key fingerprint and the
 * data directory shown.
 */
import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import { byId, renderApp, settle } from "./helpers";

async function openSettings(backend = new FakeBackend()) {
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  await user.click(byId(rendered.container, "nav-settings"));
  await settle();
  return { ...rendered, user };
}

function control(container: HTMLElement, id: string): HTMLInputElement {
  const found = container.querySelector<HTMLInputElement>(`[data-testid='setting-input'][data-id='${id}']`);
  if (!found) throw new Error(`no control for ${id}`);
  return found;
}

describe("settings", () => {
  it("shows every declared setting under its group, with the approver and the data directory", async () => {
    const { container } = await openSettings();
    const groups = [...container.querySelectorAll("[data-testid='settings'] section.panel h3")].map((h) => h.textContent);
    expect(groups).toEqual(["Checking hosts", "Notifications", "Approver", "Look", "OANP receipts", "Approver key", "Data"]);
    expect(control(container, "poll.interval_seconds").type).toBe("number");
    expect(control(container, "notify.dispute").type).toBe("checkbox");
    expect(control(container, "notify.dispute").checked).toBe(true);
    expect(control(container, "approver.email").type).toBe("email");
    expect(byId(container, "approver-fingerprint").textContent).toBe("9f2c41d07a5be3c8");
    expect(byId(container, "approver-email").textContent).toBe("ana@buyer.example");
    expect(byId(container, "settings-data-dir").textContent).toBe("/data/countersign");
  });

  it("saves a toggle at once and a number on Enter", async () => {
    const { container, backend, user } = await openSettings();
    await user.click(control(container, "notify.burst_summary"));
    await settle();
    expect(backend.settingWrites).toEqual([{ id: "notify.burst_summary", value: false }]);
    expect(byId(container, "setting-saved").dataset.id).toBe("notify.burst_summary");
    const interval = control(container, "poll.interval_seconds");
    await user.clear(interval);
    await user.type(interval, "30{Enter}");
    await settle();
    expect(backend.settingWrites.at(-1)).toEqual({ id: "poll.interval_seconds", value: 30 });
    expect(backend.settingsNow.settings.find((s) => s.id === "poll.interval_seconds")?.value).toBe(30);
  });

  it("shows the engine's refusal beside the field", async () => {
    const backend = new FakeBackend();
    backend.settingRefusal = "Poll interval must be a whole number of seconds from 2 to 3600.";
    const { container, user } = await openSettings(backend);
    const interval = control(container, "poll.interval_seconds");
    await user.clear(interval);
    await user.type(interval, "1{Enter}");
    await settle();
    const error = byId(container, "setting-error");
    expect(error.dataset.id).toBe("poll.interval_seconds");
    expect(error.textContent).toBe("Poll interval must be a whole number of seconds from 2 to 3600.");
    expect(interval.getAttribute("aria-invalid")).toBe("true");
  });

  it("says where the approver key lives and whether it is unlocked, and locks and unlocks it", async () => {
    const backend = new FakeBackend();
    const { container, user } = await openSettings(backend);
    const card = byId(container, "key-card");
    expect(card.dataset.protection).toBe("passphrase");
    expect(byId(container, "key-protection").textContent).toBe("A passphrase you chose");
    expect(byId(container, "key-location").textContent).toContain("sealed with your passphrase");
    expect(byId(container, "key-state").textContent).toContain("Unlocked");
    await user.click(byId(container, "key-lock"));
    await settle();
    expect(byId(container, "key-state").textContent).toContain("Locked");
    expect(backend.keyLocked).toBe(true);
    await user.type(byId(container, "key-passphrase"), "not it at all");
    await user.click(byId(container, "key-unlock"));
    await settle();
    expect(byId(container, "key-error").textContent).toContain("does not open");
    expect(backend.keyLocked).toBe(true);
    await user.clear(byId(container, "key-passphrase"));
    await user.type(byId(container, "key-passphrase"), "correct horse battery");
    await user.click(byId(container, "key-unlock"));
    await settle();
    expect(byId(container, "key-state").textContent).toContain("Unlocked");
    expect(backend.keyLocked).toBe(false);
  });

  it("shows the key locked the moment its idle time runs out, without a touch", async () => {
    const backend = new FakeBackend();
    // The engine says the key locks in a fifth of a second; by then it has.
    const locksAt = new Date(Date.now() + 200).toISOString();
    backend.settingsNow = { ...backend.settingsNow, key: { ...backend.settingsNow.key, locks_at: locksAt } };
    const { container } = await openSettings(backend);
    expect(byId(container, "key-state").textContent).toContain("Unlocked");
    backend.settingsNow = {
      ...backend.settingsNow,
      key: { ...backend.settingsNow.key, unlocked: false, locks_at: null },
    };
    await new Promise((resolve) => setTimeout(resolve, 700));
    await settle();
    expect(byId(container, "key-state").textContent).toContain("Locked");
    expect(byId(container, "key-unlock")).toBeTruthy();
  });

  it("names the secret store when the key is kept there, and shows the move notice", async () => {
    const backend = new FakeBackend();
    backend.settingsNow = { ...backend.settingsNow, key: { ...backend.settingsNow.key, protection: "secret_store",
      location: "In the desktop's Secret Service (service “countersign”, item “approver-key-1”); the data directory holds only a reference to it.",
      notice: "Your approver key moved from a plain file in the data directory into the desktop's secret store; the plain file is removed." } };
    const { container } = await openSettings(backend);
    expect(byId(container, "key-protection").textContent).toBe("The desktop's secret store");
    expect(byId(container, "key-notice").textContent).toContain("plain file is removed");
    expect(container.querySelector("[data-testid='key-new-passphrase']")).toBeNull();
  });

  it("seals a key kept nowhere only once the passphrase is typed the same twice", async () => {
    const backend = new FakeBackend();
    backend.settingsNow = { ...backend.settingsNow, key: { ...backend.settingsNow.key, protection: "unsaved",
      location: "Only in this console's memory: choose a passphrase to keep it." } };
    const { container, user } = await openSettings(backend);
    const seal = byId(container, "key-set-passphrase") as HTMLButtonElement;
    await user.type(byId(container, "key-new-passphrase"), "correct horse battery");
    expect(seal.disabled).toBe(true);
    await user.type(byId(container, "key-repeat-passphrase"), "correct horse batterx");
    expect(byId(container, "key-mismatch").textContent).toBe("The two passphrases differ: type the same one twice.");
    expect(byId(container, "key-repeat-passphrase").getAttribute("aria-invalid")).toBe("true");
    expect(seal.disabled).toBe(true);
    await user.clear(byId(container, "key-repeat-passphrase"));
    await user.type(byId(container, "key-repeat-passphrase"), "correct horse battery");
    expect(container.querySelector("[data-testid='key-mismatch']")).toBeNull();
    expect(seal.disabled).toBe(false);
    await user.click(seal);
    await settle();
    expect(backend.keyPassphrase).toBe("correct horse battery");
    expect(byId(container, "key-protection").textContent).toBe("A passphrase you chose");
  });
  it("moves to a new key only once confirmed with the passphrase, then lists the old key retired", async () => {
    const backend = new FakeBackend();
    const { container, user } = await openSettings(backend);
    expect([...container.querySelectorAll("[data-testid='key-list-row']")].map((r) => (r as HTMLElement).dataset.current)).toEqual(["yes"]);
    await user.click(byId(container, "key-move"));
    await settle();
    expect(byId(container, "key-move-question").textContent).toContain("Move from key 9f2c41d07a5be3c8 to a new key?");
    const confirm = byId(container, "key-move-confirm") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);
    // Cancelled: nothing was asked of the engine.
    await user.click(byId(container, "key-move-cancel"));
    await settle();
    expect(backend.keyMoves).toEqual([]);
    expect(container.querySelector("[data-testid='key-move-confirm']")).toBeNull();
    await user.click(byId(container, "key-move"));
    await settle();
    await user.type(byId(container, "key-move-passphrase"), "correct horse battery");
    await user.click(byId(container, "key-move-confirm"));
    await settle();
    expect(backend.keyMoves).toEqual(["correct horse battery"]);
    expect(byId(container, "key-move-done").textContent).toContain("7b1e22aa90c3d4f5");
    const rows = [...container.querySelectorAll<HTMLElement>("[data-testid='key-list-row']")];
    expect(rows.map((r) => r.dataset.current)).toEqual(["no", "yes"]);
    expect(rows[0].textContent).toContain("Retired");
    expect(rows[1].textContent).toContain("Signs now");
    // The approver card names the new key too.
    expect(byId(container, "approver-fingerprint").textContent).toBe("7b1e22aa90c3d4f5e6");
  });

  it("says which key unreached hosts still know, and finishes the move without asking the passphrase again", async () => {
    const backend = new FakeBackend();
    backend.keyMove = { fingerprint: "7b1e22aa90c3d4f5e6", finished: false, hosts: [
      { host_id: "h-1", label: "negotiate.fabrikam.example", moved: false,
        detail: "The host did not answer (timed out); it keeps the old key until it does." }] };
    const { container, user } = await openSettings(backend);
    await user.click(byId(container, "key-move"));
    await settle();
    await user.type(byId(container, "key-move-passphrase"), "correct horse battery");
    await user.click(byId(container, "key-move-confirm"));
    await settle();
    const host = byId(container, "key-move-host");
    expect(host.dataset.moved).toBe("no");
    expect(host.textContent).toContain("keeps the old key");
    expect(container.querySelector("[data-testid='key-move-done']")).toBeNull();
    expect(byId(container, "key-moving").textContent).toContain("9f2c41d07a5be3c8");
    expect(byId(container, "key-move").textContent).toBe("Finish moving");
    backend.keyMove = { fingerprint: "7b1e22aa90c3d4f5e6", finished: true, hosts: [
      { host_id: "h-1", label: "negotiate.fabrikam.example", moved: true, detail: "Moved: the old key was retired at 2026-12-07T10:00:00Z." }] };
    await user.click(byId(container, "key-move"));
    await settle();
    expect(container.querySelector("[data-testid='key-move-passphrase']")).toBeNull();
    await user.click(byId(container, "key-move-confirm"));
    await settle();
    expect(backend.keyMoves).toEqual(["correct horse battery", null]);
    expect(byId(container, "key-move-host").dataset.moved).toBe("yes");
  });

  it("shows a refused move in the engine's words, and offers no move while locked", async () => {
    const backend = new FakeBackend();
    backend.keyMove = new Error("That passphrase does not open the approver key.");
    const { container, user } = await openSettings(backend);
    await user.click(byId(container, "key-move"));
    await settle();
    await user.type(byId(container, "key-move-passphrase"), "wrong one entirely");
    await user.click(byId(container, "key-move-confirm"));
    await settle();
    expect(byId(container, "key-move-error").textContent).toContain("does not open");
    expect(container.querySelectorAll("[data-testid='key-list-row']").length).toBe(1);
    await user.click(byId(container, "key-move-cancel"));
    await user.click(byId(container, "key-lock"));
    await settle();
    expect(container.querySelector("[data-testid='key-move']")).toBeNull();
    expect(byId(container, "key-move-locked").textContent).toContain("Unlock the key first");
  });
});
