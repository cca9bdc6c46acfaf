import { describe, expect, it } from "vitest";
import { render } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import ReceiptScreen from "../src/lib/views/ReceiptScreen.svelte";
import { FakeBackend } from "./fakeBackend";
import { forgedView, receiptView } from "./oanpFixtures";
import { byId, renderApp, settle, texts } from "./helpers";

function screen(view = receiptView(), filedBefore = false) {
  const backend = new FakeBackend();
  backend.receiptViews.set(view.row.receipt_id, view);
  const rendered = render(ReceiptScreen, { props: { backend, receiptId: view.row.receipt_id, filedBefore, onBack: () => {} } });
  return { ...rendered, backend };
}

describe("OANP receipts", () => {
  it("names the session whose log this console holds when none was filed, as text", async () => {
    const view = receiptView();
    view.held_log = { host_id: "h1", session_id: "oanp:<img src=x onerror=alert(1)>", entries: 9 };
    const { container } = screen(view);
    await settle();
    const held = byId(container, "receipt-held-log");
    expect(held.textContent).toContain("checked against this console's copy of session oanp:<img src=x onerror=alert(1)>");
    expect(held.textContent).toContain("9 envelopes");
    expect(container.querySelector("img")).toBeNull();
    expect(byId(container, "receipt-log").textContent).not.toContain("not checked");
  });

  it("says a receipt filed again is the first filing, and says nothing on a plain open", async () => {
    const again = screen(receiptView(), true);
    await settle();
    expect(byId(again.container, "receipt-filed-before").textContent).toContain("Already filed");
    again.unmount();
    const { container } = screen();
    await settle();
    expect(container.querySelector("[data-testid='receipt-filed-before']")).toBeNull();
  });

  it("shows the development receipt as test mode and loudly not proof while test receipts are off", async () => {
    const { container } = screen();
    await settle();
    const verdict = byId(container, "receipt-proof");
    expect(verdict.dataset.proof).toBe("false");
    expect(verdict.getAttribute("role")).toBe("alert");
    expect(verdict.textContent).toContain("NOT PROOF");
    expect(verdict.textContent).toContain("Do not act on these terms");
    expect(byId(container, "receipt-test-setting").textContent).toContain("Settings → OANP receipts");
    expect(byId(container, "oanp-signer").dataset.mode).toBe("test");
    expect(byId(container, "oanp-signer-mode").textContent).toBe("test mode");
    expect(byId(container, "oanp-signer").textContent).toContain("the Valyzen development arbiter");
    const checks = [...container.querySelectorAll<HTMLElement>("[data-testid='receipt-check']")];
    expect(checks.map((c) => [c.dataset.check, c.dataset.state])).toEqual([
      ["header", "ok"], ["key", "ok"], ["signature", "ok"], ["signer", "ok"], ["mode", "fail"], ["terms", "ok"], ["chain", "skip"],
    ]);
    expect(texts(container, "receipt-check-detail")[4]).toContain("proof only when test receipts are allowed");
    expect(byId(container, "receipt-log").textContent).toContain("the chain was not checked");
  });

  it("keeps the signed terms apart from the arbiter's unverified report", async () => {
    const { container } = screen();
    await settle();
    expect(byId(container, "oanp-signed").dataset.genuine).toBe("true");
    expect(byId(container, "oanp-signed-price").textContent).toBe("419.00 USD");
    expect(byId(container, "oanp-signed-inclusions").textContent).toBe("warranty (included), cable (included)");
    expect(byId(container, "oanp-signed-session").textContent).toBe("01M42N9KCCR8TAGDXTFR3Q8TE8");
    const report = byId(container, "oanp-report");
    expect(report.textContent).toContain("unverified");
    expect(byId(container, "oanp-report-notice").textContent).toContain("not covered by its signature");
    const parties = [...report.querySelectorAll<HTMLElement>("[data-testid='oanp-party']")];
    expect(parties.map((p) => p.dataset.role)).toEqual(["buyer", "merchant"]);
    expect(parties[1].querySelector("[data-testid='oanp-party-inclusions']")?.textContent).toBe("warranty (included), cable (included)");
    expect(parties[1].textContent).toContain("cable 0.3");
    const rounds = texts(container, "oanp-round");
    expect(rounds).toHaveLength(2);
    expect(texts(container, "oanp-round-verdict")).toEqual(["fair", "fair"]);
    expect(texts(container, "oanp-round-score")).toEqual(["1.0000", "1.0000"]);
    expect(texts(container, "oanp-round-suggested")[1]).toBe("419.00 USD (derived)");
    const invariants = [...container.querySelectorAll<HTMLElement>("[data-testid='oanp-invariant']")];
    expect(invariants.map((i) => i.dataset.id)).toEqual(["I1", "I2", "I3", "I4", "I5", "I6", "I7"]);
    expect(invariants[0].textContent).toContain("Bounded rounds");
    // The signed terms are outside the report; the report's terms are inside it.
    expect(report.contains(byId(container, "oanp-signed-price"))).toBe(false);
    expect(report.contains(byId(container, "oanp-stated-terms"))).toBe(true);
  });

  it("shows proof for testing only once the setting allows test receipts", async () => {
    const allowed = receiptView({
      proof: true, allow_test: true,
      headline: "Proof for testing only: signed by the Valyzen development arbiter's test-mode key, accepted because test receipts are allowed; it proves nothing to a third party. The session log was not checked.",
    }, { proof: true });
    const { container } = screen(allowed);
    await settle();
    const verdict = byId(container, "receipt-proof");
    expect(verdict.dataset.proof).toBe("true");
    expect(verdict.textContent).toContain("Proof for testing only");
    expect(verdict.textContent).not.toContain("Do not act");
    expect(container.querySelector("[data-testid='receipt-test-setting']")).toBeNull();
  });

  it("shows a forgery as not proof, naming the signer check", async () => {
    const { container } = screen(forgedView());
    await settle();
    expect(byId(container, "receipt-proof").textContent).toContain("NOT PROOF (signer check)");
    expect(byId(container, "oanp-signer").dataset.pinned).toBe("false");
    expect(byId(container, "oanp-signer").textContent).toContain("not a pinned arbiter key");
    expect(byId(container, "oanp-signed").dataset.genuine).toBe("false");
    expect(byId(container, "oanp-signed").textContent).toContain("not signed by a pinned arbiter key");
  });

  it("shows receipt text literally, never as markup", async () => {
    const hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>";
    const base = receiptView();
    const view = receiptView({
      report: {
        ...base.detail.report,
        parties: base.detail.report.parties.map((p) => ({ ...p, agent_id: hostile })),
        invariants: base.detail.report.invariants.map((i) => ({ ...i, detail: hostile })),
      },
      checks: base.detail.checks.map((c) => ({ ...c, detail: hostile })),
    }, { file_name: hostile });
    const { container } = screen(view);
    await settle();
    expect(container.querySelector("img, script")).toBeNull();
    expect(texts(container, "oanp-party-agent")).toEqual([hostile, hostile]);
    expect(byId(container, "receipt-file").textContent).toBe(hostile);
    expect(texts(container, "receipt-check-detail")[0]).toBe(hostile);
  });

  it("exports the receipt byte for byte and says where", async () => {
    const user = userEvent.setup();
    const { container, backend } = screen();
    await settle();
    await user.click(byId(container, "export-receipt"));
    await settle();
    expect(backend.receiptExports).toEqual(["rcpt_dev"]);
    expect(byId(container, "receipt-export-path").textContent).toContain("rcpt_dev.receipt.json");
  });
});

describe("importing a receipt from history", () => {
  async function history(backend: FakeBackend) {
    const user = userEvent.setup();
    const rendered = await renderApp(backend);
    await user.click(byId(rendered.container, "nav-history"));
    await settle();
    return { ...rendered, user };
  }

  it("reads the chosen files in the webview and hands their exact bytes to the engine, then opens the receipt", async () => {
    const backend = new FakeBackend();
    backend.importAnswer = receiptView({}, { has_log: true });
    const { container, user } = await history(backend);
    expect(byId(container, "receipts-empty")).toBeTruthy();
    const receipt = new File([new Uint8Array([123, 34, 0xe2, 0x82, 0xac, 125])], "dev-receipt.json", { type: "application/json" });
    const log = new File(["[]\n"], "log.json", { type: "application/json" });
    await user.upload(byId<HTMLInputElement>(container, "receipt-import-file"), receipt);
    await user.upload(byId<HTMLInputElement>(container, "receipt-import-log"), log);
    await user.click(byId(container, "receipt-import-submit"));
    await settle();
    expect(backend.imports).toEqual([{
      protocol: "oanp", file_name: "dev-receipt.json", bytes: [123, 34, 0xe2, 0x82, 0xac, 125],
      log_file_name: "log.json", log_bytes: [91, 93, 10],
    }]);
    expect(byId(container, "receipt-view")).toBeTruthy();
    expect(byId(container, "receipt-proof").dataset.proof).toBe("false");
    await user.keyboard("{Escape}");
    await settle();
    const rows = [...container.querySelectorAll<HTMLElement>("[data-testid='receipt-row']")];
    expect(rows).toHaveLength(1);
    expect(rows[0].dataset.proof).toBe("false");
    expect(rows[0].textContent).toContain("NOT PROOF");
    expect(rows[0].textContent).toContain("test mode");
  });

  it("says why a file was refused and files nothing", async () => {
    const backend = new FakeBackend();
    const { container, user } = await history(backend);
    await user.upload(byId<HTMLInputElement>(container, "receipt-import-file"), new File(["<html>"], "page.json", { type: "application/json" }));
    await user.click(byId(container, "receipt-import-submit"));
    await settle();
    expect(byId(container, "receipt-import-error").textContent).toBe("The receipt cannot be read. Nothing was filed.");
    expect(container.querySelector("[data-testid='receipt-view']")).toBeNull();
    expect(container.querySelector("[data-testid='receipt-row']")).toBeNull();
  });
});

describe("reading a chosen file", () => {
  it("refuses a file larger than the engine reads, naming it, before reading it", async () => {
    const { readBytes } = await import("../src/lib/model/files");
    let read = false;
    const big = { name: "huge.json", size: 2_000_000, arrayBuffer: async () => { read = true; return new ArrayBuffer(0); } };
    await expect(readBytes(big, 1 << 20, "receipt")).rejects.toThrow("The receipt huge.json is 2000000 bytes, more than the 1048576 the console reads.");
    expect(read).toBe(false);
    const small = new File([new Uint8Array([0, 255, 10])], "r.json");
    expect(await readBytes(small, 1 << 20, "receipt")).toEqual([0, 255, 10]);
  });
});

describe("the test-receipts setting", () => {
  it("asks for a confirmation saying what it changes before turning on, and saves only then", async () => {
    const backend = new FakeBackend();
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.click(byId(container, "nav-settings"));
    await settle();
    const groups = [...container.querySelectorAll("[data-testid='settings'] section.panel h3")].map((h) => h.textContent);
    expect(groups).toContain("OANP receipts");
    const toggle = () => container.querySelector<HTMLInputElement>("[data-testid='setting-input'][data-id='oanp.allow_test_receipts']")!;
    expect(toggle().type).toBe("checkbox");
    expect(toggle().checked).toBe(false);

    await user.click(toggle());
    await settle();
    expect(backend.settingWrites).toEqual([]);
    expect(toggle().checked, "off until confirmed").toBe(false);
    expect(byId(container, "setting-confirm-text").textContent).toBe(
      "Count test-mode receipts as proof? Every receipt signed by an arbiter's test-mode key will then show as proof.");
    expect(document.activeElement).toBe(byId(container, "setting-confirm-yes"));
    await user.click(byId(container, "setting-confirm-no"));
    await settle();
    expect(container.querySelector("[data-testid='setting-confirm']")).toBeNull();
    expect(backend.settingWrites).toEqual([]);
    expect(toggle().checked).toBe(false);

    await user.click(toggle());
    await settle();
    await user.keyboard("{Escape}");
    await settle();
    expect(container.querySelector("[data-testid='setting-confirm']"), "Escape cancels").toBeNull();
    expect(backend.settingWrites).toEqual([]);

    await user.click(toggle());
    await settle();
    await user.click(byId(container, "setting-confirm-yes"));
    await settle();
    expect(backend.settingWrites).toEqual([{ id: "oanp.allow_test_receipts", value: true }]);
    expect(toggle().checked).toBe(true);

    await user.click(toggle());
    await settle();
    expect(container.querySelector("[data-testid='setting-confirm']"), "turning off asks nothing").toBeNull();
    expect(backend.settingWrites.at(-1)).toEqual({ id: "oanp.allow_test_receipts", value: false });
  });

  it("toggles without a confirmation where none is declared", async () => {
    const backend = new FakeBackend();
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.click(byId(container, "nav-settings"));
    await settle();
    await user.click(container.querySelector<HTMLInputElement>("[data-testid='setting-input'][data-id='notify.dispute']")!);
    await settle();
    expect(container.querySelector("[data-testid='setting-confirm']")).toBeNull();
    expect(backend.settingWrites).toEqual([{ id: "notify.dispute", value: false }]);
  });
});
