/**
 * The console's look, as the person chose it in Settings (`look.theme`,
 * saved by the engine): "system" follows the desktop's light or dark
 * preference, and keeps following it; "light" and "dark" hold whatever the
 * desktop prefers. The choice lands on the root element as `data-theme`
 * ("light" or "dark"), which app.css reads; nothing else decides the look.
 */

/** The setting's id in the engine's settings. */
export const THEME_SETTING = "look.theme";

/** The look drawn. */
export type Look = "light" | "dark";

const DARK_QUERY = "(prefers-color-scheme: dark)";

/** The look for a saved choice: "light" or "dark" as chosen, else the desktop's preference. */
export function resolveLook(choice: unknown, desktopPrefersDark: boolean): Look {
  if (choice === "light" || choice === "dark") return choice;
  return desktopPrefersDark ? "dark" : "light";
}

/** What the desktop prefers, where the webview can ask (never in a test's DOM without matchMedia). */
function desktopQuery(): MediaQueryList | null {
  return typeof window !== "undefined" && typeof window.matchMedia === "function" ? window.matchMedia(DARK_QUERY) : null;
}

let stopFollowing: (() => void) | null = null;

/**
 * Applies a choice at once to `root` and, for "system", follows the desktop
 * as it changes until the next call.
 */
export function applyTheme(choice: unknown, root: HTMLElement = document.documentElement, query = desktopQuery()): Look {
  stopFollowing?.();
  stopFollowing = null;
  const look = resolveLook(choice, query?.matches ?? false);
  root.dataset.theme = look;
  if (query && choice !== "light" && choice !== "dark") {
    const follow = (event: MediaQueryListEvent) => { root.dataset.theme = resolveLook(choice, event.matches); };
    query.addEventListener("change", follow);
    stopFollowing = () => query.removeEventListener("change", follow);
  }
  return look;
}
