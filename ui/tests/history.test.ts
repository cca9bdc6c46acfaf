import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";

async function openHistory(backend = new FakeBackend()) {
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  await user.click(byId(rendered.container, "nav-history"));
  await settle();
  return { ...rendered, user };
}

describe("history", () => {
  it("lists every session with its state, total and trust", async () => {
    const { container } = await openHistory();
    const rows = texts(container, "history-row");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain("Contoso GmbH");
    expect(rows[0]).toContain("540,000 USD");
    expect(rows[0]).toContain("1 pending");
    expect(rows[1]).toContain("DISPUTED");
  });

  it("says a session's state in the words the State filter offers (agreed, not accepted)", async () => {
    const { container, backend, user } = await openHistory();
    expect(texts(container, "history-row-state")).toEqual(["open", "agreed"]);
    const offered = [...byId(container, "history-state").querySelectorAll("option")].map((o) => o.textContent);
    expect(offered).toEqual(["Any state", "open", "pending", "agreed", "closed", "disputed"]);
    for (const state of texts(container, "history-row-state")) expect(offered).toContain(state);
    await user.selectOptions(byId(container, "history-state"), "agreed");
    await settle();
    expect(backend.filters.at(-1)).toEqual({ state: "agreed" });
  });

  it("takes amounts written with grouping commas and refuses garbage with a message", async () => {
    const { container, backend, user } = await openHistory();
    await user.type(byId(container, "history-max"), "100,000");
    await settle();
    expect(container.querySelector("[data-testid='filter-error']")).toBeNull();
    expect(backend.filters.at(-1)).toEqual({ max_total: "100000" });
    await user.clear(byId(container, "history-max"));
    await user.type(byId(container, "history-max"), "1,00");
    await settle();
    expect(byId(container, "filter-error").textContent).toBe(
      "Max total “1,00” is not an amount: write it like 250000, 250,000 or 1140.50. That filter is ignored until it is one.");
    expect(byId(container, "history-max").getAttribute("aria-invalid")).toBe("true");
    expect(backend.filters.at(-1)).toEqual({});
  });

  it("marks a session whose agent accepted against a decision, and only that one", async () => {
    const backend = new FakeBackend();
    const [first, second] = fx.sessionRows();
    backend.rows = [{ ...first, breaches: 1 }, { ...second, breaches: 2 }, { ...first, session_id: "s-kept", breaches: 0 }];
    const { container } = await openHistory(backend);
    const marks = texts(container, "history-breach");
    expect(marks).toEqual(["agent broke a decision", "agent broke 2 decisions"]);
    const rows = texts(container, "history-row");
    expect(rows[2]).not.toContain("agent broke");
  });

  it("sends search text and filters to the engine", async () => {
    const { container, backend, user } = await openHistory();
    expect(backend.filters[0]).toEqual({});
    await user.type(byId(container, "history-search"), "CRM");
    await user.selectOptions(byId(container, "history-counterparty"), "Fabrikam Inc");
    await user.selectOptions(byId(container, "history-state"), "disputed");
    await user.type(byId(container, "history-min"), "100000");
    await user.type(byId(container, "history-max"), "600000.50");
    await settle();
    expect(backend.filters.at(-1)).toEqual({
      text: "CRM", counterparty: "Fabrikam Inc", state: "disputed", min_total: "100000", max_total: "600000.50",
    });
  });

  it("explains an amount filter that is not a number and leaves it out", async () => {
    const { container, backend, user } = await openHistory();
    await user.type(byId(container, "history-min"), "lots");
    await settle();
    expect(byId(container, "filter-error").textContent).toContain("Min total “lots” is not an amount");
    expect(byId(container, "history-min").getAttribute("aria-invalid")).toBe("true");
    expect(backend.filters.at(-1)).toEqual({});
  });

  it("says when nothing matches", async () => {
    const backend = new FakeBackend();
    backend.rows = [];
    const { container } = await openHistory(backend);
    expect(byId(container, "history-empty").textContent).toBe("No sessions match.");
  });

  it("renders a thousand sessions a page at a time", async () => {
    const backend = new FakeBackend();
    const row = fx.sessionRows()[0];
    backend.rows = Array.from({ length: 1000 }, (_, i) => ({ ...row, session_id: `s-${i}` }));
    const { container, user } = await openHistory(backend);
    expect(container.querySelectorAll("[data-testid='history-row']")).toHaveLength(50);
    await user.click(byId(container, "history-more"));
    await settle();
    expect(container.querySelectorAll("[data-testid='history-row']")).toHaveLength(100);
    expect(byId(container, "history-more").textContent).toBe("Show 50 more (900 not shown)");
  });

  it("opens a disputed session's timeline when its notification is clicked", async () => {
    const backend = new FakeBackend();
    const { container } = await renderApp(backend);
    expect(container.querySelector("[data-testid='session-view']")).toBeNull();
    backend.emitOpenSession({ host_id: "h-sandbox", session_id: "s-contoso" });
    await settle();
    expect(backend.detailRefs).toEqual([{ host_id: "h-sandbox", session_id: "s-contoso" }]);
    expect(byId(container, "session-view").textContent).toContain("Session with Contoso GmbH");
  });

  it("opens a session with its timeline, chart and decisions, and j/k/Enter work on the list", async () => {
    const { container, user, backend } = await openHistory();
    await user.keyboard("j");
    expect(byId(container, "history-row").dataset.selected).toBe("false");
    await user.keyboard("k");
    await user.keyboard("{Enter}");
    await settle();
    expect(backend.detailRefs).toEqual([{ host_id: "h-sandbox", session_id: "s-contoso" }]);
    await settle();
    expect(byId(container, "session-view").textContent).toContain("Session with Contoso GmbH");
    const rows = [...container.querySelectorAll("[data-testid='timeline-row']")].map((row) =>
      [...row.querySelectorAll("td")].map((cell) => cell.textContent?.trim()));
    expect(rows[1].slice(0, 6)).toEqual(["1", "Fri 27 Nov, 08:01", "vendor_agent", "theirs", "Offer", "Offer: 585000 USD, 36 months"]);
    expect(texts(container, "timeline-signature")).toEqual(["verified", "verified", "unproven", "verified", "verified"]);
    const vendorLine = byId(container, "series-counterparty").getAttribute("points")!.split(" ");
    expect(vendorLine).toHaveLength(2);
    expect(byId(container, "series-ours").getAttribute("points")!.split(" ")).toHaveLength(1);
    expect(byId(container, "totals-chart").querySelector("svg")?.getAttribute("aria-label"))
      .toBe("Counterparty totals 585,000, 540,000; our totals 520,000");
    expect(texts(container, "decision-row")[0]).toContain("counter");
    expect(byId(container, "decision-key").textContent).toContain("9f2c41d0");
    expect(container.querySelector("[data-testid='decision-chain']")).toBeNull();
    await user.keyboard("{Escape}");
    await settle();
    expect(byId(container, "history")).toBeTruthy();
  });

  it("names the chain each decision was made on: the step, the role, the rule and who approved before", async () => {
    const backend = new FakeBackend();
    const detail = fx.sessionDetail();
    detail.decisions = [{ ...detail.decisions[0], action: "approve", chain: {
      reason: "Above 10,000 USD: rule 2", rule: 2, policy_version: 3, step: 2, role: "finance", stand_in: null,
      steps: [
        { number: 1, met: true, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
          parts: [{ role: "buyer", required: 1, approved_by: ["ann@fabrikam.example"], may_act: [], stood_in: [] }] },
        { number: 2, met: false, respond_within_minutes: 480, escalate_to: "cfo", due_at: null, escalated: false,
          parts: [{ role: "finance", required: 1, approved_by: [], may_act: ["ana@buyer.example"], stood_in: [] }] },
      ] } }];
    backend.detail = detail;
    const { container } = await renderApp(backend);
    backend.emitOpenSession({ host_id: "h-sandbox", session_id: "s-contoso" });
    await settle();
    expect(byId(container, "decision-chain").textContent).toBe(
      "As finance at step 2 · Above 10,000 USD: rule 2 (policy version 3) · before it: step 1 buyer ann@fabrikam.example");
  });

  it("names a decision made as a stand-in, and approvals before it made so", async () => {
    const backend = new FakeBackend();
    const detail = fx.sessionDetail();
    detail.decisions = [{ ...detail.decisions[0], action: "approve", chain: {
      reason: "Above 10,000 USD: rule 2", rule: 2, policy_version: 3, step: 2, role: "finance",
      stand_in: { for_person: "fay@fabrikam.example", delegation: "urn:countersign:delegation:5f0c" },
      steps: [
        { number: 1, met: true, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
          parts: [{ role: "buyer", required: 1, approved_by: ["grace@fabrikam.example"], may_act: [],
            stood_in: [{ by: "grace@fabrikam.example", for_person: "ann@fabrikam.example" }] }] },
        { number: 2, met: false, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
          parts: [{ role: "finance", required: 1, approved_by: [], may_act: ["ana@buyer.example"], stood_in: [] }] },
      ] } }];
    backend.detail = detail;
    const { container } = await renderApp(backend);
    backend.emitOpenSession({ host_id: "h-sandbox", session_id: "s-contoso" });
    await settle();
    expect(byId(container, "decision-chain").textContent).toBe("As finance for fay@fabrikam.example (stand-in) at step 2 · "
      + "Above 10,000 USD: rule 2 (policy version 3) · before it: step 1 buyer grace@fabrikam.example for ann@fabrikam.example");
  });

  it("lists the host's record of every approval, made here or elsewhere, with role, step and stand-in", async () => {
    const backend = new FakeBackend();
    const detail = fx.sessionDetail();
    detail.decisions = [];
    detail.host_approvals = [
      { event_hash: "sha256:aa", approved_by: "ann@fabrikam.example", at: "2026-12-07T10:02:00Z", step: 1, role: "buyer",
        for_person: null, reason: "Above 10,000 USD: rule 2", rule: 2, policy_version: 3 },
      { event_hash: "sha256:aa", approved_by: "grace@fabrikam.example", at: "2026-12-07T11:30:00Z", step: 2, role: "finance",
        for_person: "fay@fabrikam.example", reason: "Above 10,000 USD: rule 2", rule: 2, policy_version: 3 },
      { event_hash: "sha256:bb", approved_by: "lee@fabrikam.example", at: "2026-12-07T12:00:00Z", step: null, role: "legal",
        for_person: null, reason: null, rule: null, policy_version: null },
    ];
    backend.detail = detail;
    const { container } = await renderApp(backend);
    backend.emitOpenSession({ host_id: "h-sandbox", session_id: "s-contoso" });
    await settle();
    const rows = [...container.querySelectorAll<HTMLElement>("[data-testid='host-approval']")].map((r) => r.textContent ?? "");
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain("Step 1 · buyer · ann@fabrikam.example");
    expect(rows[1]).toContain("Step 2 · finance · grace@fabrikam.example for fay@fabrikam.example (stand-in)");
    expect(rows[2]).toContain("legal · lee@fabrikam.example");
    expect(byId(container, "host-approvals-why").textContent).toBe("Above 10,000 USD: rule 2 (policy version 3)");
  });

  it("shows no host record where there is none", async () => {
    const backend = new FakeBackend();
    backend.detail = fx.sessionDetail();
    const { container } = await renderApp(backend);
    backend.emitOpenSession({ host_id: "h-sandbox", session_id: "s-contoso" });
    await settle();
    expect(container.querySelector("[data-testid='host-approvals']")).toBeNull();
  });

  it("exports JSON and CSV and shows where the file was written", async () => {
    const { container, backend, user } = await openHistory();
    await user.click(byId(container, "history-row"));
    await settle();
    await user.click(byId(container, "export-csv"));
    await settle();
    expect(byId(container, "export-path").textContent).toBe("Written to /data/countersign/exports/s-contoso.csv (2,048 bytes).");
    await user.click(byId(container, "export-json"));
    await settle();
    expect(byId(container, "export-path").textContent).toContain("s-contoso.json");
    expect(backend.exports).toEqual(["csv", "json"]);
  });

  it("reloads on engine://changed for sessions", async () => {
    const { container, backend } = await openHistory();
    backend.rows = [];
    backend.emitChanged({ what: "sessions" });
    await settle();
    expect(byId(container, "history-empty")).toBeTruthy();
  });
});
