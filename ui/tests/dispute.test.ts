/**
 * A disputed session has a next step: which host and session at a glance,
 * the evidence exported, an acknowledgement with a note; it stays disputed.
 */
import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle } from "./helpers";

async function openDisputed() {
  const backend = new FakeBackend();
  backend.detail = fx.disputedDetail();
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  backend.emitOpenSession({ host_id: "h-sandbox", session_id: "s-fabrikam" });
  await settle();
  return { ...rendered, backend, user };
}

describe("a disputed session", () => {
  it("names its host, session, counterparty, seq and check at a glance", async () => {
    const { container } = await openDisputed();
    expect(byId(container, "dispute-host").textContent).toBe("Sandbox");
    expect(byId(container, "dispute-session").textContent).toBe("s-fabrikam");
    expect(byId(container, "dispute-counterparty").textContent).toBe("Fabrikam Inc");
    expect(byId(container, "dispute-failure").textContent).toBe("event 3: payload_hash");
    expect(byId(container, "dispute-panel").textContent).toContain("It stays disputed");
  });

  it("exports the evidence and says where it went", async () => {
    const { container, backend, user } = await openDisputed();
    await user.click(byId(container, "export-evidence"));
    await settle();
    expect(backend.disputeExports).toEqual([{ host_id: "h-sandbox", session_id: "s-fabrikam" }]);
    expect(byId(container, "evidence-path").textContent)
      .toContain("/data/countersign/exports/dispute-s-fabrikam (9,000 bytes): evidence.json, stored-events.json, host-answer.json");
  });

  it("takes an acknowledgement with a note, and only with one", async () => {
    const { container, backend, user } = await openDisputed();
    const submit = byId<HTMLButtonElement>(container, "dispute-acknowledge");
    expect(submit.disabled).toBe(true);
    await user.type(byId(container, "dispute-note"), "Told the host's admin; ticket 4411.");
    await user.click(submit);
    await settle();
    expect(backend.acknowledgements).toEqual([
      { ref: { host_id: "h-sandbox", session_id: "s-fabrikam" }, note: "Told the host's admin; ticket 4411." },
    ]);
    expect(byId(container, "dispute-acknowledged").textContent).toContain("Acknowledged by ana@buyer.example");
    expect(byId(container, "dispute-acknowledged").textContent).toContain("ticket 4411");
    expect(byId(container, "verification-state").dataset.state).toBe("disputed");
  });
});
