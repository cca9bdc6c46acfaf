/**
 * Filed receipts a person manages: what is not a receipt is refused with the
 * engine's sentence and nothing is listed; a filed one is removed only after
 * a confirmation that says what goes and what stays, and the record of its
 * removal (who, when, which file, what it said) is listed; while test-mode
 * receipts count as proof, every receipt view says so.
 */
import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import { byId, renderApp, settle, texts } from "./helpers";
import { receiptView } from "./oanpFixtures";

const RELAXED = "Test-mode receipts count as proof (Settings, OANP receipts): a receipt signed by an arbiter's test-mode key shows as proof here, for testing only; it proves nothing to anyone else.";

async function history(backend: FakeBackend) {
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  await user.click(byId(rendered.container, "nav-history"));
  await settle();
  return { ...rendered, user };
}

describe("refusing what is not a receipt", () => {
  it("shows the engine's sentence naming what is wrong, and lists nothing", async () => {
    const backend = new FakeBackend();
    const sentence = "This file is not an OANP receipt, which has `artifact`, `signed_payload` and `jwks` (or, for a session closed without agreement, `session_id`, `state` and `arbiter`), and it has none of them. Nothing was filed.";
    backend.importAnswer = new Error(sentence);
    const { container, user } = await history(backend);
    await user.upload(byId<HTMLInputElement>(container, "receipt-import-file"),
      new File(['{"not":"a receipt"}'], "not-a-receipt.json", { type: "application/json" }));
    await user.click(byId(container, "receipt-import-submit"));
    await settle();
    expect(byId(container, "receipt-import-error").textContent).toBe(sentence);
    expect(container.querySelector("[data-testid='receipt-row']")).toBeNull();
    expect(container.querySelector("[data-testid='receipt-view']")).toBeNull();
  });
});

describe("removing a filed receipt", () => {
  it("asks first, removes on confirmation, and lists who removed what and when", async () => {
    const backend = new FakeBackend();
    const view = receiptView();
    backend.receiptViews.set(view.row.receipt_id, view);
    const { container, user } = await history(backend);
    expect(container.querySelector("[data-testid='receipts-removed']")).toBeNull();
    await user.click(byId(container, "receipt-row"));
    await settle();

    await user.click(byId(container, "remove-receipt"));
    await settle();
    const confirm = byId(container, "remove-receipt-confirm");
    expect(confirm.textContent).toContain("Remove dev-receipt.json from this console?");
    expect(confirm.textContent).toContain("a record of the removal stays");
    expect(document.activeElement, "the safe answer has the focus").toBe(byId(container, "remove-receipt-no"));
    await user.click(byId(container, "remove-receipt-no"));
    await settle();
    expect(container.querySelector("[data-testid='remove-receipt-confirm']")).toBeNull();
    expect(backend.removed).toEqual([]);

    await user.click(byId(container, "remove-receipt"));
    await settle();
    await user.click(byId(container, "remove-receipt-yes"));
    await settle();
    expect(backend.removed.map((r) => r.receipt_id)).toEqual(["rcpt_dev"]);
    // Back on the list: the receipt is gone, the record of its removal is there.
    expect(container.querySelector("[data-testid='receipt-view']")).toBeNull();
    expect(container.querySelector("[data-testid='receipt-row']")).toBeNull();
    expect(texts(container, "receipt-removal-file")).toEqual(["dev-receipt.json"]);
    const by = byId(container, "receipt-removal-by").textContent ?? "";
    expect(by).toContain("removed by Ana Approver <ana@buyer.example> on");
    expect(byId(container, "receipt-removal-headline").textContent).toBe(view.row.headline);
    expect(byId(container, "receipt-removal-sha").textContent).toBe(`SHA-256 ${"ab".repeat(32)}`);
  });

  it("says why a removal failed and stays on the receipt", async () => {
    const backend = new FakeBackend();
    const view = receiptView();
    backend.receiptViews.set(view.row.receipt_id, view);
    backend.removeReceipt = async () => { throw { code: "not_found", message: "No receipt rcpt_dev is known to this console." }; };
    const { container, user } = await history(backend);
    await user.click(byId(container, "receipt-row"));
    await settle();
    await user.click(byId(container, "remove-receipt"));
    await settle();
    await user.click(byId(container, "remove-receipt-yes"));
    await settle();
    expect(byId(container, "remove-error").textContent).toBe("No receipt rcpt_dev is known to this console.");
    expect(byId(container, "receipt-view")).toBeTruthy();
  });

  it("keeps removed counterparty text as text", async () => {
    const backend = new FakeBackend();
    backend.removed = [{
      receipt_id: "rcpt_x", protocol: "oanp", file_name: "<img src=x onerror=alert(1)>.json", receipt_sha256: "cd".repeat(32),
      log_file_name: null, log_sha256: null, sandbox: true, imported_at: "2026-11-29T10:00:00Z", session_id: null,
      headline: "<b>NOT PROOF</b>", removed_at: "2026-11-29T12:30:00Z", removed_by_name: "Ana", removed_by_email: "ana@buyer.example",
    }];
    const { container } = await history(backend);
    expect(texts(container, "receipt-removal-file")).toEqual(["<img src=x onerror=alert(1)>.json"]);
    expect(byId(container, "receipt-removal-headline").textContent).toBe("<b>NOT PROOF</b>");
    expect(container.querySelector("[data-testid='receipts-removed'] img, [data-testid='receipts-removed'] b")).toBeNull();
  });
});

describe("while test-mode receipts count as proof", () => {
  it("says so on the list and on every receipt, and not when they do not", async () => {
    const backend = new FakeBackend();
    const view = receiptView({}, { proof: true });
    backend.receiptViews.set(view.row.receipt_id, view);
    const off = await history(backend);
    expect(off.container.querySelector("[data-testid='receipts-relaxed']")).toBeNull();
    await off.user.click(byId(off.container, "receipt-row"));
    await settle();
    expect(off.container.querySelector("[data-testid='receipt-relaxed']")).toBeNull();
    off.unmount();

    backend.relaxed = [RELAXED];
    const on = await history(backend);
    expect(texts(on.container, "receipts-relaxed")).toEqual([RELAXED]);
    await on.user.click(byId(on.container, "receipt-row"));
    await settle();
    expect(texts(on.container, "receipt-relaxed")).toEqual([RELAXED]);
  });
});
