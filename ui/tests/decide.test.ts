import { afterEach, describe, expect, it, vi } from "vitest";
import { render } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import ProposalView from "../src/lib/views/ProposalView.svelte";
import type { DecisionResult } from "../src/lib/backend";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, settle, texts } from "./helpers";

const ref = { host_id: "h-sandbox", session_id: "s-contoso", event_hash: "hash-contoso-5" };

async function renderOffer(backend = new FakeBackend()) {
  const user = userEvent.setup();
  const result = render(ProposalView, { props: { backend, proposalRef: ref, onBack: () => {} } });
  await settle();
  return { ...result, backend, user };
}

describe("approve", () => {
  it("needs a second, confirming step that shows exactly what is accepted", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "approve-button"));
    expect(backend.decided).toEqual([]);
    const summary = byId(container, "approve-summary").textContent ?? "";
    expect(summary).toContain("Contoso GmbH");
    expect(summary).toContain("540,000 USD for 24 months");
    expect(summary).toContain("3 line items");
    expect(summary).toContain("SSO add-on");
    expect(summary).toContain("Annual uplift capped at 3%");
    await user.click(byId(container, "approve-confirm"));
    await settle();
    expect(backend.decided).toEqual([
      { host_id: "h-sandbox", session_id: "s-contoso", in_response_to: "hash-contoso-5", action: "approve" },
    ]);
    const outcome = byId(container, "outcome");
    expect(outcome.dataset.tone).toBe("success");
    expect(outcome.textContent).toContain("Approved: the acceptance was appended");
    expect(outcome.textContent).toContain("accept appended at seq 6");
    expect(outcome.getAttribute("aria-live")).toBe("polite");
    expect(container.querySelector("[data-testid='approve-button']")).toBeNull();
  });

  it("reads as decided once the engine reloads it: no warning, no countdown, no buttons", async () => {
    const backend = new FakeBackend();
    const user = userEvent.setup();
    const result = render(ProposalView, { props: { backend, proposalRef: ref, onBack: () => {}, version: 0 } });
    await settle();
    await user.click(byId(result.container, "approve-button"));
    await user.click(byId(result.container, "approve-confirm"));
    await settle();
    backend.views.set("hash-contoso-5", fx.decidedView());
    await result.rerender({ version: 1 });
    await settle();
    const summary = byId(result.container, "decision-summary");
    expect(summary.dataset.outcome).toBe("appended");
    expect(texts(result.container, "decision-by")).toEqual(["ana@buyer.example"]);
    expect(texts(result.container, "decision-at")).toEqual(["Sun 29 Nov, 11:58"]);
    expect(texts(result.container, "decision-event")).toEqual(["accept appended as seq 6, verified"]);
    expect(byId(result.container, "offer-decided").textContent).toBe("Approved");
    expect(result.container.querySelector("[data-testid='reload-error']")).toBeNull();
    expect(result.container.querySelector("[data-testid='countdown']")).toBeNull();
    expect(result.container.querySelector("[data-testid='offer-approvals']")).toBeNull();
    expect(result.container.querySelector("[data-testid='approve-button']")).toBeNull();
  });

  it("says when the host will still wait for another approver", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.offerView({
      item: fx.inboxItem({ approvals_required: 3, approvals_given: 1 }),
      approvals: [{ approved_by: "bo@buyer.example", at: "2026-11-29T11:50:00Z" }],
    }));
    const { container, user } = await renderOffer(backend);
    expect(byId(container, "offer-approvals").textContent).toBe("1 of 3 approvals");
    expect(byId(container, "offer-view").textContent).toContain("bo@buyer.example at Sun 29 Nov, 11:50");
    await user.click(byId(container, "approve-button"));
    expect(byId(container, "approvals-needed").textContent)
      .toContain("This needs 3 approvals; 1 given. After yours the host still waits for another approver.");
  });

  it("can be cancelled at the confirming step", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "approve-button"));
    await user.click(byId(container, "approve-cancel"));
    expect(container.querySelector("[data-testid='approve-summary']")).toBeNull();
    expect(backend.decided).toEqual([]);
  });

  it("sends once however often the button is pressed", async () => {
    const backend = new FakeBackend();
    let finish: (result: DecisionResult) => void = () => {};
    backend.decision = () => new Promise<DecisionResult>((resolve) => (finish = resolve));
    const { container, user } = await renderOffer(backend);
    await user.click(byId(container, "approve-button"));
    const confirm = byId<HTMLButtonElement>(container, "approve-confirm");
    await user.click(confirm);
    expect(confirm.disabled).toBe(true);
    expect(confirm.textContent).toBe("Approving…");
    await user.click(confirm);
    confirm.click();
    expect(backend.decided).toHaveLength(1);
    finish({ decision_id: "d-1", outcome: "awaiting_approvals", detail: "1 of 2 approvals given", appended: null });
    await settle();
    expect(byId(container, "outcome").textContent).toContain("waiting for another approver");
    expect(byId(container, "outcome").textContent).toContain("1 of 2 approvals given");
  });

  it("shows a hold by screening and a refusal plainly", async () => {
    const backend = new FakeBackend();
    backend.decision = { decision_id: "d-2", outcome: "held", detail: "the screen is unavailable; everything is held", appended: null };
    const first = await renderOffer(backend);
    await first.user.click(byId(first.container, "approve-button"));
    await first.user.click(byId(first.container, "approve-confirm"));
    await settle();
    expect(byId(first.container, "outcome").dataset.tone).toBe("held");
    expect(byId(first.container, "outcome").textContent).toContain("Held by screening: nothing was sent to the other side.");
    first.unmount();

    backend.decision = new Error("This offer expired at 14:02; it can no longer be approved.");
    const { container, user } = await renderOffer(backend);
    await user.click(byId(container, "approve-button"));
    await user.click(byId(container, "approve-confirm"));
    await settle();
    const outcome = byId(container, "outcome");
    expect(outcome.dataset.tone).toBe("refused");
    expect(outcome.textContent).toContain("Refused: nothing was sent.");
    expect(outcome.textContent).toContain("This offer expired at 14:02; it can no longer be approved.");
    expect(outcome.querySelector("[role='alert']")).not.toBeNull();
  });
});

describe("expiry on screen", () => {
  afterEach(() => vi.useRealTimers());

  it("withdraws approve and counter the second the offer expires", async () => {
    vi.useFakeTimers({ now: Date.parse("2026-11-29T14:04:58Z"), toFake: ["setInterval", "clearInterval", "Date"] });
    const { container } = render(ProposalView, { props: { backend: new FakeBackend(), proposalRef: ref, onBack: () => {} } });
    await settle();
    expect(byId(container, "approve-button")).toBeTruthy();
    expect(container.querySelector("[data-testid='expired-notice']")).toBeNull();
    vi.advanceTimersByTime(2000);
    await settle();
    expect(container.querySelector("[data-testid='approve-button']")).toBeNull();
    expect(container.querySelector("[data-testid='counter-button']")).toBeNull();
    expect(byId(container, "expired-notice").textContent).toContain("can no longer be approved");
  });
});

describe("decline", () => {
  it("cannot be sent without a reason", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "decline-button"));
    const submit = byId<HTMLButtonElement>(container, "decline-submit");
    expect(submit.disabled).toBe(true);
    expect(byId(container, "decline-hint").textContent).toContain("A decline needs a reason");
    const other = [...container.querySelectorAll<HTMLInputElement>("[data-testid='decline-preset']")].find((r) => r.value === "Other")!;
    await user.click(other);
    expect(submit.disabled).toBe(true);
    await user.type(byId(container, "decline-reason"), "   ");
    expect(submit.disabled).toBe(true);
    expect(backend.decided).toEqual([]);
  });

  it("sends the preset and the person's words", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "decline-button"));
    const preset = [...container.querySelectorAll<HTMLInputElement>("[data-testid='decline-preset']")]
      .find((r) => r.value === "Terms are not acceptable")!;
    await user.click(preset);
    await user.type(byId(container, "decline-reason"), "We need Net 30");
    expect(byId(container, "decline-hint").textContent).toContain("“Terms are not acceptable: We need Net 30”");
    await user.click(byId(container, "decline-submit"));
    await settle();
    // Nothing is sent before the confirmation.
    expect(backend.decided).toEqual([]);
    await user.click(byId(container, "confirm-send"));
    await settle();
    expect(backend.decided).toEqual([{
      host_id: "h-sandbox", session_id: "s-contoso", in_response_to: "hash-contoso-5", action: "decline",
      reason: "Terms are not acceptable: We need Net 30",
    }]);
    expect(byId(container, "outcome").textContent).toContain("Declined");
  });
});

describe("counter", () => {
  it("shows the engine's validation errors beside their fields and sends nothing", async () => {
    const backend = new FakeBackend();
    backend.counterCheck = {
      ok: false, diff: null,
      errors: [
        { path: "/line_items/1/unit_price", message: "must be a non-negative decimal" },
        { path: "term_months", message: "must be a whole number from 1 to 120" },
      ],
    };
    const { container, user } = await renderOffer(backend);
    await user.click(byId(container, "counter-button"));
    const prices = container.querySelectorAll<HTMLInputElement>("[data-testid='counter-line-unit_price']");
    await user.clear(prices[1]);
    await user.type(prices[1], "-5");
    await user.clear(byId(container, "counter-term"));
    await user.type(byId(container, "counter-term"), "500");
    await user.click(byId(container, "counter-validate"));
    await settle();
    expect(backend.validated[0].line_items[1].unit_price).toBe(-5);
    expect(backend.validated[0].term_months).toBe(500);
    expect(texts(container, "counter-error")).toEqual([
      "Line 2, unit price: must be a non-negative decimal",
      "Term months: must be a whole number from 1 to 120",
    ]);
    const inline = [...container.querySelectorAll<HTMLElement>("[data-testid='field-error']")];
    expect(inline.map((e) => e.dataset.path)).toEqual(["term_months", "line_items.1.unit_price"]);
    expect(prices[1].getAttribute("aria-invalid")).toBe("true");
    expect(byId<HTMLButtonElement>(container, "counter-submit").disabled).toBe(true);
    expect(backend.decided).toEqual([]);
  });

  it("previews the diff of what will be sent, and sends exactly the checked offer", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "counter-button"));
    const submit = byId<HTMLButtonElement>(container, "counter-submit");
    expect(submit.disabled).toBe(true);
    await user.click(byId(container, "counter-add-line"));
    const lines = container.querySelectorAll("[data-testid='counter-line']");
    expect(lines).toHaveLength(4);
    await user.type(lines[3].querySelector<HTMLInputElement>("[data-testid='counter-line-description']")!, "Sandbox tenant");
    await user.type(byId(container, "counter-notes"), " Counter from buyer.");
    await user.click(byId(container, "counter-validate"));
    await settle();
    expect(byId(container, "counter-preview").textContent).toContain("What will be sent");
    expect(byId(container, "counter-preview").querySelectorAll("[data-testid='diff-row']")).toHaveLength(4);
    expect(submit.disabled).toBe(false);

    await user.type(byId(container, "counter-notes"), "!");
    expect(submit.disabled).toBe(true);
    expect(byId(container, "counter-stale").textContent).toContain("check again");
    await user.click(byId(container, "counter-validate"));
    await settle();
    await user.click(submit);
    await settle();
    expect(backend.decided).toEqual([]);
    await user.click(byId(container, "confirm-send"));
    await settle();
    expect(backend.decided).toHaveLength(1);
    const sent = backend.decided[0];
    expect(sent.action).toBe("counter");
    expect(sent.counter as any).toEqual(backend.validated[1]);
    expect((sent.counter as any)?.line_items[3]).toMatchObject({ description: "Sandbox tenant", quantity: 1, unit_price: 0, currency: "USD" });
    expect((sent.counter as any)?.notes).toBe("Best and final for this quarter. Counter from buyer.!");
    expect(byId(container, "outcome").textContent).toContain("Counter-offer sent");
  });
});

describe("one confirmation for every decision that binds", () => {
  /** The confirmation's words, as the person reads them. */
  function confirmation(container: HTMLElement) {
    return {
      to: byId(container, "confirm-to").textContent ?? "",
      binds: byId(container, "confirm-binds").textContent ?? "",
      bindsNow: byId(container, "confirm-binds").dataset.binds,
    };
  }

  it("approve shows what is accepted, to whom, that it binds the organization, and sends on Enter", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "approve-button"));
    const words = confirmation(container);
    expect(words.to).toBe("To Contoso GmbH, on the session's log: an accept carrying your approval.");
    expect(words.binds).toBe("Binds the organization to these terms.");
    expect(words.bindsNow).toBe("now");
    expect(backend.decided).toEqual([]);
    expect(document.activeElement).toBe(byId(container, "approve-confirm"));
    await user.keyboard("{Enter}");
    await settle();
    expect(backend.decided.map((d) => d.action)).toEqual(["approve"]);
  });

  it("decline asks to confirm on Enter in the reason, says it does not bind, and sends on Enter", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "decline-button"));
    await user.type(byId(container, "decline-reason"), "Over budget{Enter}");
    await settle();
    expect(backend.decided).toEqual([]);
    expect(byId(container, "confirm-step").dataset.action).toBe("decline");
    expect(byId(container, "confirm-sent").textContent).toContain("“Over budget”");
    const words = confirmation(container);
    expect(words.to).toBe("To Contoso GmbH, on the session's log: a decline with your reason.");
    expect(words.binds).toBe("Does not bind the organization.");
    expect(document.activeElement).toBe(byId(container, "confirm-send"));
    await user.keyboard("{Enter}");
    await settle();
    expect(backend.decided).toEqual([{
      host_id: "h-sandbox", session_id: "s-contoso", in_response_to: "hash-contoso-5", action: "decline", reason: "Over budget",
    }]);
  });

  it("a confirmation cancelled sends nothing and keeps what was written", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "decline-button"));
    await user.type(byId(container, "decline-reason"), "Over budget{Enter}");
    await settle();
    await user.click(byId(container, "confirm-cancel"));
    await settle();
    expect(container.querySelector("[data-testid='confirm-step']")).toBeNull();
    expect(byId<HTMLTextAreaElement>(container, "decline-reason").value).toBe("Over budget");
    expect(backend.decided).toEqual([]);
  });

  it("counter shows to whom and that it binds only if they accept, and sends on Enter", async () => {
    const { container, backend, user } = await renderOffer();
    await user.click(byId(container, "counter-button"));
    await user.click(byId(container, "counter-validate"));
    await settle();
    await user.click(byId(container, "counter-submit"));
    await settle();
    expect(backend.decided).toEqual([]);
    expect(byId(container, "confirm-step").dataset.action).toBe("counter");
    const words = confirmation(container);
    expect(words.to).toBe("To Contoso GmbH, on the session's log: your counter-offer.");
    expect(words.binds).toBe("Does not bind the organization now; binds it if Contoso GmbH accepts it.");
    expect(words.bindsNow).toBe("no");
    expect(document.activeElement).toBe(byId(container, "confirm-send"));
    await user.keyboard("{Enter}");
    await settle();
    expect(backend.decided.map((d) => d.action)).toEqual(["counter"]);
  });
});

describe("a locked key", () => {
  it("asks to unlock, then carries on with the same decision", async () => {
    const backend = new FakeBackend();
    backend.keyLocked = true;
    const { container, user } = await renderOffer(backend);
    await user.click(byId(container, "approve-button"));
    await user.click(byId(container, "approve-confirm"));
    await settle();
    expect(backend.decided).toEqual([]);
    expect(byId(container, "unlock-why").textContent).toContain("locked");
    await user.type(byId(container, "unlock-passphrase"), "wrong passphrase here");
    await user.click(byId(container, "unlock-confirm"));
    await settle();
    expect(byId(container, "unlock-error").textContent).toContain("does not open");
    expect(backend.decided).toEqual([]);
    await user.clear(byId(container, "unlock-passphrase"));
    await user.type(byId(container, "unlock-passphrase"), "correct horse battery");
    await user.click(byId(container, "unlock-confirm"));
    await settle();
    expect(backend.decided).toEqual([
      { host_id: "h-sandbox", session_id: "s-contoso", in_response_to: "hash-contoso-5", action: "approve" },
    ]);
    expect(byId(container, "outcome").dataset.tone).toBe("success");
    expect(container.querySelector("[data-testid='unlock-step']")).toBeNull();
  });
});

describe("a chain of approvals (the organization's policy of authority)", () => {
  const chain = (overrides: Partial<import("../src/lib/backend").ApprovalChain> = {}): import("../src/lib/backend").ApprovalChain => ({
    reason: "Above 10,000 USD: rule 2", rule: 2, policy_version: 3, current_step: 2,
    you_may_approve: false, you_may_decide: false, your_role: null, your_stand_in: null,
    steps: [
      { number: 1, met: true, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
        parts: [{ role: "buyer", required: 1, approved_by: ["ann@fabrikam.example"], may_act: [], stood_in: [] }] },
      { number: 2, met: false, respond_within_minutes: 480, escalate_to: "cfo", due_at: null, escalated: false,
        parts: [{ role: "finance", required: 1, approved_by: [], may_act: ["fay@fabrikam.example", "frank@fabrikam.example"], stood_in: [] }] },
    ],
    ...overrides,
  });

  async function withChain(c: import("../src/lib/backend").ApprovalChain) {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.offerView({ item: fx.inboxItem({ chain: c }) }));
    return renderOffer(backend);
  }

  it("shows why it was routed, each step, and offers nothing to sign when it is not this person's turn", async () => {
    const { container } = await withChain(chain());
    expect(byId(container, "chain-why").textContent).toBe("Routed: Above 10,000 USD: rule 2 (policy version 3)");
    expect(texts(container, "chain-step")).toEqual([
      "Step 1 · buyer 1 of 1 — approved by ann@fabrikam.example",
      "Step 2 · finance 0 of 1; may approve: fay@fabrikam.example, frank@fabrikam.example (within 8 h, then also cfo)",
    ]);
    expect(byId(container, "chain-turn").textContent).toBe(
      "Not yours to decide now: step 2 waits on finance, and you hold none of those roles.");
    for (const button of ["approve-button", "decline-button", "counter-button"]) {
      expect(container.querySelector(`[data-testid='${button}']`)).toBeNull();
    }
  });

  it("offers approve, decline and counter to a holder of the current step", async () => {
    const { container } = await withChain(chain({ you_may_approve: true, you_may_decide: true }));
    expect(byId(container, "chain-turn").textContent).toBe("Your turn: step 2 waits on finance, which you hold.");
    for (const button of ["approve-button", "decline-button", "counter-button"]) {
      expect(container.querySelector(`[data-testid='${button}']`)).not.toBeNull();
    }
  });

  it("lets one whose approval already counts decline or counter, but not approve again", async () => {
    const { container } = await withChain(chain({ you_may_approve: false, you_may_decide: true }));
    expect(container.querySelector("[data-testid='approve-button']")).toBeNull();
    expect(container.querySelector("[data-testid='decline-button']")).not.toBeNull();
  });

  it("says when the current step is due, and once past it, that the escalation role may act too", async () => {
    const due = chain({ steps: [chain().steps[0], { ...chain().steps[1], due_at: "2026-11-29T18:00:00Z" }] });
    let { container } = await withChain(due);
    expect(texts(container, "chain-step")[1]).toMatch(/\(within 8 h, due .+, then also cfo\)$/);
    const escalated = chain({
      you_may_approve: true, you_may_decide: true, your_role: "cfo", your_stand_in: null,
      steps: [chain().steps[0], { ...chain().steps[1], due_at: "2026-11-29T18:00:00Z", escalated: true,
        parts: [{ role: "finance", required: 1, approved_by: [], may_act: ["fay@fabrikam.example", "carol@fabrikam.example"], stood_in: [] }] }],
    });
    ({ container } = await withChain(escalated));
    expect(texts(container, "chain-step")[1]).toContain("(past its 8 h: offered to cfo too)");
    expect(byId(container, "chain-turn").textContent).toBe(
      "Your turn: step 2 is past its time and offered to cfo too, which you hold.");
  });

  it("names who approved as a stand-in, and for whom", async () => {
    const { container } = await withChain(chain({ steps: [
      { ...chain().steps[0], parts: [{ role: "buyer", required: 2, approved_by: ["ann@fabrikam.example", "grace@fabrikam.example"],
        may_act: [], stood_in: [{ by: "grace@fabrikam.example", for_person: "fay@fabrikam.example" }] }] },
      chain().steps[1],
    ] }));
    expect(texts(container, "chain-step")[0]).toBe(
      "Step 1 · buyer 2 of 2 — approved by ann@fabrikam.example, grace@fabrikam.example for fay@fabrikam.example");
  });

  it("says this person decides as the holder's role, for the holder, when they stand in", async () => {
    const standingIn = chain({
      you_may_approve: true, you_may_decide: true, your_role: "finance",
      your_stand_in: { for_person: "fay@fabrikam.example", delegation: "urn:countersign:delegation:5f0c" },
    });
    const { container, user } = await withChain(standingIn);
    expect(byId(container, "chain-turn").textContent).toBe(
      "Your turn: step 2 waits on finance; you decide as finance, for fay@fabrikam.example (stand-in).");
    await user.click(byId(container, "approve-button"));
    expect(byId(container, "confirm-stand-in").textContent).toBe(
      "You decide as finance, for fay@fabrikam.example (stand-in): the decision names both of you.");
  });

  it("says for whom a stand-in may still decline or counter once their approval counts", async () => {
    const { container } = await withChain(chain({
      you_may_approve: false, you_may_decide: true, your_role: "finance",
      your_stand_in: { for_person: "fay@fabrikam.example", delegation: "urn:countersign:delegation:5f0c" },
    }));
    expect(byId(container, "chain-turn").textContent).toBe("Step 2 waits on finance; your approval already counts on this request, "
      + "but you may still decline or counter as finance, for fay@fabrikam.example (stand-in).");
  });

  it("says nothing of stand-ins to one deciding in their own right", async () => {
    const { container, user } = await withChain(chain({ you_may_approve: true, you_may_decide: true, your_role: "finance" }));
    await user.click(byId(container, "approve-button"));
    expect(container.querySelector("[data-testid='confirm-stand-in']")).toBeNull();
    expect(byId(container, "chain-turn").textContent).not.toContain("stand-in");
  });

  it("shows counterparty-free policy text as text, never as markup", async () => {
    const { container } = await withChain(chain({ reason: "<img src=x onerror=alert(1)>: rule 1", policy_version: null }));
    expect(byId(container, "chain-why").textContent).toBe("Routed: <img src=x onerror=alert(1)>: rule 1");
    expect(container.querySelector("img")).toBeNull();
  });
});

describe("an old-threshold chain of one approval", () => {
  it("adds nothing to the panel: one approval by anyone is how every org without a policy decides", async () => {
    const backend = new FakeBackend();
    backend.views.set("hash-contoso-5", fx.offerView({ item: fx.inboxItem({ chain: {
      reason: "Up to 250000 (legacy approval.above_total): rule 2", rule: 2, policy_version: null, current_step: 1,
      you_may_approve: true, you_may_decide: true, your_role: "approver", your_stand_in: null,
      steps: [{ number: 1, met: false, respond_within_minutes: null, escalate_to: null, due_at: null, escalated: false,
        parts: [{ role: "approver", required: 1, approved_by: [], may_act: ["ana@buyer.example"], stood_in: [] }] }] } }) }));
    const { container } = await renderOffer(backend);
    expect(container.querySelector("[data-testid='chain']")).toBeNull();
    expect(container.querySelector("[data-testid='approve-button']")).not.toBeNull();
  });
});
