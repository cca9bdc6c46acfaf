/**
 * After a decision, as a person at the keyboard meets it: the offer reads as
 * decided, a toast says what was sent and opens its session in history, the
 * next pending decision is one key away, and the counts agree.
 */
import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";
import { toastText } from "../src/lib/model/decided";

/** A backend whose engine, once the first offer is approved, drops it from the inbox and reports it decided. */
function deciding(): FakeBackend {
  const backend = new FakeBackend();
  const items = fx.inboxItems();
  for (const item of items) backend.views.set(item.event_hash, fx.offerView({ item }));
  const decide = backend.decide.bind(backend);
  backend.decide = async (request) => {
    const result = await decide(request);
    backend.items = fx.inboxItems().filter((item) => item.event_hash !== request.in_response_to);
    backend.views.set(request.in_response_to, fx.decidedView());
    backend.emitChanged({ what: "inbox", host_id: request.host_id, session_id: request.session_id });
    return result;
  };
  return backend;
}

/** Opens Contoso's offer (second by expiry) and approves it with the keyboard: j j a Enter. */
async function approveContoso(backend: FakeBackend) {
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  await user.keyboard("jj");
  await user.keyboard("a");
  await settle();
  await user.keyboard("{Enter}");
  await settle();
  return { ...rendered, user };
}

describe("who a decision went to", () => {
  it("says an approval went to our own agent where the protocol's decision does (OANP, Concordia)", () => {
    const result = { decision_id: "d1", outcome: "appended" as const, detail: "", appended: null };
    expect(toastText("approve", "Contoso Monitors", result, "own_agent"))
      .toBe("Approval sent to our agent: it may now accept the offer from Contoso Monitors.");
    expect(toastText("approve", "Contoso GmbH", { ...result, appended: { seq: 6, kind: "accept", event_hash: "h", verified: true } }, "counterparty"))
      .toBe("Approval sent to Contoso GmbH: accept appended as seq 6, verified.");
  });
});

describe("after a decision", () => {
  it("reads as decided with no warning, and the counts agree with what is left", async () => {
    const backend = deciding();
    const { container } = await approveContoso(backend);
    expect(byId(container, "decision-summary").dataset.outcome).toBe("appended");
    expect(container.querySelector("[data-testid='reload-error']")).toBeNull();
    expect(container.querySelector("[data-testid='countdown']")).toBeNull();
    // Contoso was unread and opened; Northwind stays unread: one new, in the nav. Two
    // decisions still wait on the person (Fabrikam's was read, not decided): the title says 2.
    expect(byId(container, "unread-count").textContent).toBe("1 new");
    expect(document.title).toBe("(2) Countersign");
  });

  it("leaves a toast saying what was sent, whose link opens the session in history", async () => {
    const backend = deciding();
    const { container, user } = await approveContoso(backend);
    expect(byId(container, "toast-text").textContent).toBe("Approval sent to Contoso GmbH: accept appended as seq 6, verified.");
    await user.click(byId(container, "toast-open-history"));
    await settle();
    expect(byId(container, "session-view")).toBeTruthy();
    expect(backend.detailRefs.at(-1)).toEqual({ host_id: "h-sandbox", session_id: "s-contoso" });
    await user.click(byId(container, "toast-dismiss"));
    expect(container.querySelector("[data-testid='decision-toast']")).toBeNull();
  });

  it("floats the toast over the page: its coming and going change nothing inside the page's content", async () => {
    const backend = deciding();
    const { container, user } = await approveContoso(backend);
    const main = container.querySelector("main")!;
    const toast = byId(container, "decision-toast");
    expect(main.contains(toast)).toBe(false);
    expect(byId(container, "toast-layer").contains(toast)).toBe(true);
    const before = main.innerHTML;
    await user.click(byId(container, "toast-dismiss"));
    await settle();
    expect(container.querySelector("[data-testid='decision-toast']")).toBeNull();
    expect(main.innerHTML).toBe(before);
  });

  it("puts the next pending decision one key away: j (or n) the one that took its place, k the one before", async () => {
    const backend = deciding();
    const { container, user } = await approveContoso(backend);
    await user.keyboard("j");
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Northwind Traders");
    // The toast spoke of Contoso's session: it does not stay on Northwind's offer.
    expect(container.querySelector("[data-testid='decision-toast']")).toBeNull();
    await user.keyboard("k");
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Fabrikam Inc");
    await user.keyboard("n");
    await settle();
    expect(byId(container, "offer-counterparty").textContent).toBe("Northwind Traders");
  });

  it("shows an answer given elsewhere for what it is", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.decidedView({
      decision: { action: "approve", outcome: "answered", decided_by: "grace@buyer.example", at: "2026-11-29T11:30:00Z",
        decision_id: null, appended: { seq: 6, kind: "accept", event_hash: "h6", verified: true }, detail: "Accepted at seq 6.", reason: null, breach: null, countered: null },
    }));
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("jj{Enter}");
    await settle();
    expect(texts(container, "decision-headline")).toEqual(["Approved elsewhere: the session log shows the answer."]);
    expect(texts(container, "decision-by")).toEqual(["grace@buyer.example"]);
    expect(container.querySelector("[data-testid='approve-button']")).toBeNull();
  });

  it("shows a gate request declined at another console as declined, by whom, with the reason as text", async () => {
    const backend = new FakeBackend();
    const reason = "<img src=x onerror=alert(1)> Above our benchmark.";
    backend.views.set("hash-contoso-5", fx.decidedView({
      decision: { action: "decline", outcome: "decided", decided_by: "grace@buyer.example", at: "2026-11-29T11:30:00Z",
        decision_id: null, appended: null, reason, breach: null, countered: null,
        detail: "The host recorded a decline for the org's agent. The session log shows no answer from the agent yet." },
    }));
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("jj{Enter}");
    await settle();
    expect(texts(container, "decision-headline")).toEqual(["Declined at another console: the host told the org's agent not to accept."]);
    expect(texts(container, "offer-decided")).toEqual(["Declined"]);
    expect(texts(container, "decision-by")).toEqual(["grace@buyer.example"]);
    expect(texts(container, "decision-reason")).toEqual([reason]);
    expect(container.querySelector("[data-testid='decision-reason'] img")).toBeNull();
    expect(container.querySelector("[data-testid='approve-button']")).toBeNull();
  });

  it("says loudly, as an alert, that the org's agent accepted what was declined", async () => {
    const backend = new FakeBackend();
    const breach = "The org's agent accepted at seq 7 although the decision recorded for this request was a decline: it acted against the person's decision.";
    backend.views.set("hash-contoso-5", fx.decidedView({
      decision: { action: "decline", outcome: "decided", decided_by: "grace@buyer.example", at: "2026-11-29T11:30:00Z",
        decision_id: null, appended: { seq: 7, kind: "negotiate.accept", event_hash: "h7", verified: true }, reason: "Too high.", breach, countered: null,
        detail: "The host recorded a decline for the org's agent. The session log shows the agent's answer at seq 7." },
    }));
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("jj{Enter}");
    await settle();
    const alert = byId(container, "decision-breach");
    expect(alert.getAttribute("role")).toBe("alert");
    expect(alert.textContent).toBe(breach);
  });

  it("shows no breach when the agent kept to the decision", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.decidedView());
    const { container } = await renderApp(backend);
    const user = userEvent.setup();
    await user.keyboard("jj{Enter}");
    await settle();
    expect(container.querySelector("[data-testid='decision-breach']")).toBeNull();
  });

  it("shows an approval completed at another console as approved by both, not as still waiting", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.decidedView({
      decision: { action: "approve", outcome: "decided", decided_by: "ana@buyer.example, grace@buyer.example",
        at: "2026-11-29T11:40:00Z", decision_id: "d-42", appended: null, reason: null, breach: null, countered: null,
        detail: "The host recorded the approvals its policy needs (2 of 2) for the org's agent. The session log shows no answer from the agent yet." },
    }));
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("jj{Enter}");
    await settle();
    expect(texts(container, "decision-headline")).toEqual([
      "Approved: another approver gave the last approval the policy needs; the host told the org's agent it may accept.",
    ]);
    expect(texts(container, "decision-by")).toEqual(["ana@buyer.example, grace@buyer.example"]);
    expect(container.querySelector("[data-testid='decision-reason']")).toBeNull();
  });

  it("shows a counter's terms beside the offer they answered, counterparty text as text", async () => {
    const backend = new FakeBackend();
    const hostile = "<img src=x onerror=alert(1)> Net 30";
    const diff = fx.offerDiff();
    diff.notes = { old: "Best and final for this quarter.", new: hostile };
    backend.views.set("hash-contoso-5", fx.decidedView({
      decision: { action: "counter", outcome: "appended", decided_by: "Ana Silva (ana@buyer.example)", at: "2026-11-29T11:58:00Z",
        decision_id: "d-43", appended: { seq: 6, kind: "counter_offer", event_hash: "h6", verified: true }, reason: null, breach: null,
        countered: { proposal_kind: "anp_offer", ...diff }, detail: "Counter-offer appended at seq 6." },
    }));
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("jj{Enter}");
    await settle();
    const shown = byId(container, "decision-countered");
    expect(shown.querySelector("h3")?.textContent).toBe("Offered instead");
    expect(shown.querySelectorAll("[data-testid='diff-row']")).toHaveLength(4);
    expect(shown.textContent).toContain("The counter");
    expect(shown.textContent).toContain(hostile);
    expect(shown.querySelector("img")).toBeNull();
    expect(texts(container, "decision-by")).toEqual(["Ana Silva (ana@buyer.example)"]);
  });

  it("shows no terms offered instead for an approval", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.decidedView());
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("jj{Enter}");
    await settle();
    expect(byId(container, "decision-summary").dataset.action).toBe("approve");
    expect(container.querySelector("[data-testid='decision-countered']")).toBeNull();
  });

  it("shows a request nobody decided in time as expired", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.decidedView({
      decision: { action: null, outcome: "expired", decided_by: null, at: "2026-11-29T12:00:00Z", decision_id: null,
        appended: null, reason: null, breach: null, countered: null, detail: "Nobody decided before it expired, so the org's agent must not accept." },
    }));
    const user = userEvent.setup();
    const { container } = await renderApp(backend);
    await user.keyboard("jj{Enter}");
    await settle();
    expect(byId(container, "decision-summary").dataset.outcome).toBe("expired");
    expect(texts(container, "decision-headline")).toEqual(["Expired: nobody decided in time, so the org's agent must not accept."]);
    expect(texts(container, "offer-decided")).toEqual(["Expired"]);
  });
});
