/**
 * The theme is a setting (System, Light, Dark) the engine keeps: choosing
 * one applies it at once, System follows the desktop as it changes, and the
 * saved choice is applied when the console starts.
 */
import { afterEach, describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { applyTheme, resolveLook } from "../src/lib/model/theme";
import { FakeBackend } from "./fakeBackend";
import { byId, renderApp, settle } from "./helpers";

/** A desktop whose preference a test changes, as a MediaQueryList reports it. */
function desktop(dark: boolean) {
  const listeners = new Set<(event: MediaQueryListEvent) => void>();
  const query = {
    matches: dark,
    addEventListener: (_: string, f: (event: MediaQueryListEvent) => void) => listeners.add(f),
    removeEventListener: (_: string, f: (event: MediaQueryListEvent) => void) => listeners.delete(f),
  } as unknown as MediaQueryList;
  const prefer = (next: boolean) => {
    (query as { matches: boolean }).matches = next;
    listeners.forEach((f) => f({ matches: next } as MediaQueryListEvent));
  };
  return { query, prefer, listeners };
}

afterEach(() => { delete document.documentElement.dataset.theme; });

describe("the look", () => {
  it("is the choice, or the desktop's preference for System", () => {
    expect(resolveLook("light", true)).toBe("light");
    expect(resolveLook("dark", false)).toBe("dark");
    expect(resolveLook("system", true)).toBe("dark");
    expect(resolveLook("system", false)).toBe("light");
    expect(resolveLook("purple", true), "anything else is the desktop's").toBe("dark");
  });

  it("follows the desktop while System is chosen, and holds once Light or Dark is", () => {
    const root = document.createElement("div");
    const { query, prefer, listeners } = desktop(false);
    expect(applyTheme("system", root, query)).toBe("light");
    expect(root.dataset.theme).toBe("light");
    prefer(true);
    expect(root.dataset.theme).toBe("dark");
    applyTheme("light", root, query);
    expect(listeners.size, "no longer following").toBe(0);
    prefer(true);
    expect(root.dataset.theme).toBe("light");
    applyTheme("dark", root, query);
    prefer(false);
    expect(root.dataset.theme).toBe("dark");
  });

  it("is offered in Settings, saved through the engine and applied at once", async () => {
    const backend = new FakeBackend();
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.click(byId(container, "nav-settings"));
    await settle();
    const choices = [...container.querySelectorAll<HTMLInputElement>("[data-testid='setting-choice'][data-id='look.theme']")];
    expect(choices.map((c) => [c.dataset.value, c.parentElement?.textContent?.trim(), c.checked])).toEqual([
      ["system", "System", true], ["light", "Light", false], ["dark", "Dark", false],
    ]);
    await user.click(choices[2]);
    await settle();
    expect(backend.settingWrites).toEqual([{ id: "look.theme", value: "dark" }]);
    expect(document.documentElement.dataset.theme).toBe("dark");
    await user.click(container.querySelector<HTMLInputElement>("[data-testid='setting-choice'][data-value='light']")!);
    await settle();
    expect(document.documentElement.dataset.theme).toBe("light");
  });

  it("starts as the engine kept it", async () => {
    const backend = new FakeBackend();
    backend.settingsNow = {
      ...backend.settingsNow,
      settings: backend.settingsNow.settings.map((s) => (s.id === "look.theme" ? { ...s, value: "dark" } : s)),
    };
    await renderApp(backend);
    await settle();
    expect(document.documentElement.dataset.theme).toBe("dark");
  });
});
