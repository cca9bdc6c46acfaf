import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";

describe("sandbox and hosts", () => {
  it("says plainly that this is a sandbox with demo vendors", async () => {
    const { container } = await renderApp();
    const banner = byId(container, "sandbox-banner");
    expect(banner.textContent).toContain("Sandbox.");
    expect(banner.textContent).toContain("demo agents");
  });

  it("has no sandbox banner when connected to a real host", async () => {
    const backend = new FakeBackend();
    backend.app = { ...fx.appState, sandbox: false };
    const { container } = await renderApp(backend);
    expect(container.querySelector("[data-testid='sandbox-banner']")).toBeNull();
  });

  it("says when the approver key is kept nowhere, and leads to Settings to choose a passphrase", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    backend.app = { ...fx.appState, sandbox: false, hosts: [], key_kept: false };
    backend.settingsNow = { ...backend.settingsNow, key: { ...backend.settingsNow.key, protection: "unsaved" } };
    const { container } = await renderApp(backend);
    const banner = byId(container, "key-not-kept");
    expect(banner.textContent).toContain("kept nowhere yet");
    await user.click(byId(container, "key-not-kept-open"));
    await settle();
    byId(container, "settings");
    expect(document.activeElement?.getAttribute("data-testid")).toBe("key-new-passphrase");
  });

  it("asks for the passphrase of a sealed key not opened since the start, and refuses a wrong one", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    backend.app = { ...fx.appState, key_loaded: false };
    backend.keyLocked = true;
    const { container } = await renderApp(backend);
    expect(byId(container, "key-not-loaded").textContent).toContain("no host is asked for news");
    const open = byId(container, "key-open") as HTMLButtonElement;
    expect(open.disabled).toBe(true);
    await user.type(byId(container, "key-open-passphrase"), "not it at all");
    await user.click(open);
    await settle();
    expect(byId(container, "key-open-error").textContent).toContain("does not open");
    expect(backend.keyLocked).toBe(true);
    await user.clear(byId(container, "key-open-passphrase"));
    backend.app = { ...fx.appState, key_loaded: true };
    await user.type(byId(container, "key-open-passphrase"), "correct horse battery{Enter}");
    await settle();
    expect(backend.keyLocked).toBe(false);
    expect(container.querySelector("[data-testid='key-not-loaded']")).toBeNull();
  });

  it("has no key banner once the key is kept", async () => {
    const { container } = await renderApp();
    expect(container.querySelector("[data-testid='key-not-kept']")).toBeNull();
    expect(container.querySelector("[data-testid='key-not-loaded']")).toBeNull();
  });

  it("connects to a host with URL and enrollment code", async () => {
    const user = userEvent.setup();
    const { container, backend } = await renderApp();
    await user.click(byId(container, "connect-toggle"));
    const submit = byId<HTMLButtonElement>(container, "connect-submit");
    expect(submit.disabled).toBe(true);
    await user.type(byId(container, "connect-url"), "https://buyer.example");
    await user.type(byId(container, "connect-code"), "ENR-1234");
    await user.click(submit);
    await settle();
    expect(backend.connects).toEqual([
      { url: "https://buyer.example", code: "ENR-1234", name: "Ana Approver", email: "ana@buyer.example", allow_plain_http: false },
    ]);
    expect(byId(container, "connect-success").textContent).toBe("Connected to Buyer Corp as ana@buyer.example.");
  });

  it("enrolls as the name and email typed, prefilled from the configured approver", async () => {
    const user = userEvent.setup();
    const { container, backend } = await renderApp();
    await user.click(byId(container, "connect-toggle"));
    const name = byId<HTMLInputElement>(container, "connect-name");
    const email = byId<HTMLInputElement>(container, "connect-email");
    expect([name.value, email.value]).toEqual(["Ana Approver", "ana@buyer.example"]);
    await user.type(byId(container, "connect-url"), "https://buyer.example");
    await user.type(byId(container, "connect-code"), "ENR-9");
    await user.clear(email);
    const submit = byId<HTMLButtonElement>(container, "connect-submit");
    expect(submit.disabled).toBe(true);
    await user.type(email, " grace@contoso.example ");
    await user.clear(name);
    await user.type(name, "Grace Hopper");
    await user.click(submit);
    await settle();
    expect(backend.connects).toEqual([
      { url: "https://buyer.example", code: "ENR-9", name: "Grace Hopper", email: "grace@contoso.example", allow_plain_http: false },
    ]);
  });

  it("says it connected even though the sandbox banner, form and all, goes away", async () => {
    const user = userEvent.setup();
    const { container, backend } = await renderApp();
    await user.click(byId(container, "connect-toggle"));
    await user.type(byId(container, "connect-url"), "https://buyer.example");
    await user.type(byId(container, "connect-code"), "ENR-1234");
    backend.app = { ...fx.appState, sandbox: false };
    const before = backend.inboxCalls;
    await user.click(byId(container, "connect-submit"));
    await settle();
    expect(container.querySelector("[data-testid='sandbox-banner']")).toBeNull();
    expect(byId(container, "connected-notice").textContent)
      .toContain("Connected to Buyer Corp as ana@buyer.example. Its pending offers join the inbox.");
    expect(backend.inboxCalls).toBeGreaterThan(before);
    await user.click(byId(container, "connected-notice").querySelector("button")!);
    expect(container.querySelector("[data-testid='connected-notice']")).toBeNull();
  });

  it("shows why a connection failed in words", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    backend.connect = new Error("That enrollment code has expired; ask your administrator for a new one.");
    const { container } = await renderApp(backend);
    await user.click(byId(container, "connect-toggle"));
    await user.type(byId(container, "connect-url"), "https://buyer.example");
    await user.type(byId(container, "connect-code"), "OLD");
    await user.click(byId(container, "connect-submit"));
    await settle();
    expect(byId(container, "connect-error").textContent)
      .toBe("Could not connect: That enrollment code has expired; ask your administrator for a new one.");
  });

  it("shows the refusal of plain HTTP and sends the lab override only once it is ticked", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    const refusal = "http://10.0.0.5:8080 is plain HTTP: the enrollment code and the host's key would travel unencrypted. "
      + "Use the host's https:// address; for a lab host on a network you trust, tick “Allow plain HTTP to this host (lab only)”.";
    backend.connect = () => { throw { code: "plain_http", message: refusal }; };
    const { container } = await renderApp(backend);
    await user.click(byId(container, "connect-toggle"));
    await user.type(byId(container, "connect-url"), "https://buyer.example");
    // Offered only for an http:// address.
    expect(container.querySelector("[data-testid='connect-allow-http']")).toBeNull();
    await user.clear(byId(container, "connect-url"));
    await user.type(byId(container, "connect-url"), "http://10.0.0.5:8080");
    await user.type(byId(container, "connect-code"), "ENR-1");
    const allow = byId<HTMLInputElement>(container, "connect-allow-http");
    expect(allow.checked).toBe(false);
    expect(byId(container, "connect-plain-http").textContent).toContain("Allow plain HTTP to this host (lab only)");
    await user.click(byId(container, "connect-submit"));
    await settle();
    expect(byId(container, "connect-error").textContent).toBe(`Could not connect: ${refusal}`);
    expect(backend.connects.map((c) => c.allow_plain_http)).toEqual([false]);
    backend.connect = { ...fx.sandboxHost, host_id: "h-lab", label: "10.0.0.5:8080", sandbox: false, url: "http://10.0.0.5:8080",
      plain_http: true, plain_http_allowed_at: "2026-11-29T12:00:00Z" };
    await user.click(allow);
    await user.click(byId(container, "connect-submit"));
    await settle();
    expect(backend.connects.map((c) => [c.url, c.allow_plain_http])).toEqual([
      ["http://10.0.0.5:8080", false], ["http://10.0.0.5:8080", true]]);
    expect(byId(container, "connect-success").textContent).toContain("Connected to 10.0.0.5:8080");
  });

  it("marks a host reached over plain HTTP with a warning badge", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    backend.app = {
      ...fx.appState, sandbox: false,
      hosts: [fx.sandboxHost,
        { ...fx.sandboxHost, host_id: "h-lab", label: "10.0.0.5:8080", sandbox: false, url: "http://10.0.0.5:8080",
          plain_http: true, plain_http_allowed_at: "2026-11-29T12:00:00Z" },
        { ...fx.sandboxHost, host_id: "h-old", label: "old.example", sandbox: false, url: "http://old.example",
          plain_http: true, plain_http_allowed_at: null }],
    };
    const { container } = await renderApp(backend);
    await user.click(byId(container, "nav-hosts"));
    await settle();
    // The sandbox on loopback carries no badge.
    expect(texts(container, "host-plain-http")).toEqual(["plain HTTP", "plain HTTP"]);
    expect(texts(container, "host-plain-http-note")).toEqual([
      "You allowed plain HTTP to this host (lab only) on Sun 29 Nov, 12:00: what this console exchanges with it can be read on the network.",
      "Connected over plain HTTP before the console refused it: what this console exchanges with it can be read on the network. Reconnect with its https:// address.",
    ]);
  });

  it("clears a connection error as soon as the input is edited", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    backend.connect = new Error("Nothing at buyer.example:443 accepted the connection: the host is not running there, or the address or port is wrong. Check the URL with the host's admin, or start the host, then try again.");
    const { container } = await renderApp(backend);
    await user.click(byId(container, "connect-toggle"));
    await user.type(byId(container, "connect-url"), "https://buyer.example");
    await user.type(byId(container, "connect-code"), "ENR-1");
    await user.click(byId(container, "connect-submit"));
    await settle();
    expect(byId(container, "connect-error").textContent).toContain("Nothing at buyer.example:443 accepted the connection");
    await user.type(byId(container, "connect-url"), ":8443");
    expect(container.querySelector("[data-testid='connect-error']")).toBeNull();
    // Again after a second failure, from another field.
    await user.click(byId(container, "connect-submit"));
    await settle();
    expect(container.querySelector("[data-testid='connect-error']")).not.toBeNull();
    await user.type(byId(container, "connect-code"), "2");
    expect(container.querySelector("[data-testid='connect-error']")).toBeNull();
  });

  it("lists hosts as reachable or unreachable with the last error", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    backend.app = {
      ...fx.appState,
      hosts: [fx.sandboxHost, { ...fx.sandboxHost, host_id: "h-2", label: "Buyer Corp", sandbox: false, reachable: false,
        last_error: "connection refused by 10.0.0.5:443" }],
    };
    const { container } = await renderApp(backend);
    expect(byId(container, "hosts-unreachable").textContent).toBe("1 unreachable");
    await user.click(byId(container, "nav-hosts"));
    await settle();
    expect(texts(container, "host-state")).toEqual(["reachable", "unreachable"]);
    expect(byId(container, "host-error").textContent).toBe("connection refused by 10.0.0.5:443");
    backend.app = { ...fx.appState };
    backend.emitChanged({ what: "hosts" });
    await settle();
    expect(texts(container, "host-state")).toEqual(["reachable"]);
  });

  it("lists a sandbox no longer run as not polled, never as unreachable", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    backend.app = {
      ...fx.appState, sandbox: false,
      hosts: [{ ...fx.sandboxHost, polled: false, reachable: false, last_error: "connection refused" },
        { ...fx.sandboxHost, host_id: "h-2", label: "Buyer Corp", sandbox: false }],
    };
    const { container } = await renderApp(backend);
    expect(container.querySelector("[data-testid='hosts-unreachable']")).toBeNull();
    await user.click(byId(container, "nav-hosts"));
    await settle();
    expect(texts(container, "host-state")).toEqual(["not polled", "reachable"]);
    expect(byId(container, "hosts").textContent).toContain("Its sessions stay in History.");
    expect(container.querySelector("[data-testid='host-error']")).toBeNull();
  });

  it("says of each host whether it is heard at once or polled, and why", async () => {
    const user = userEvent.setup();
    const backend = new FakeBackend();
    backend.app = {
      ...fx.appState,
      hosts: [fx.sandboxHost, { ...fx.sandboxHost, host_id: "h-2", label: "Buyer Corp", sandbox: false,
        updates: { mode: "polling", detail: "Polls every 5 s: the host does not offer waiting for changes." } }],
    };
    const { container } = await renderApp(backend);
    await user.click(byId(container, "nav-hosts"));
    await settle();
    expect(texts(container, "host-updates-mode")).toEqual(["at once", "polling"]);
    expect(texts(container, "host-updates-detail")).toEqual([
      "Hears of changes at once: one request waits at the host until something changes.",
      "Polls every 5 s: the host does not offer waiting for changes.",
    ]);
  });

  it("says when live updates cannot be had, and how to refresh instead", async () => {
    const backend = new FakeBackend();
    backend.onChanged = () => Promise.reject({ code: "forbidden", message: "event.listen not allowed" });
    const { container } = await renderApp(backend);
    expect(byId(container, "live-error").textContent)
      .toBe("Live updates are unavailable (event.listen not allowed); use “Check now” to refresh.");
  });
});
