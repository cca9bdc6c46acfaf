import { render } from "@testing-library/svelte";
import { tick } from "svelte";
import App from "../src/App.svelte";
import { FakeBackend } from "./fakeBackend";

/** Lets pending promises and Svelte updates settle (setTimeout is never faked in these tests). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await tick();
  }
}

/** Renders the whole app against a fake backend and waits for its first data. */
export async function renderApp(backend = new FakeBackend()) {
  const result = render(App, { props: { backend } });
  await settle();
  return { ...result, backend };
}

/** Text of every element with a test id, in document order. */
export function texts(container: HTMLElement, testid: string): string[] {
  return [...container.querySelectorAll(`[data-testid='${testid}']`)].map((el) => (el.textContent ?? "").replace(/\s+/g, " ").trim());
}

/** The one element with a test id; fails the test when it is missing. */
export function byId<T extends HTMLElement = HTMLElement>(container: HTMLElement, testid: string): T {
  const found = container.querySelector<T>(`[data-testid='${testid}']`);
  if (!found) throw new Error(`no element with data-testid=${testid}`);
  return found;
}
