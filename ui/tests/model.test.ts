import { describe, expect, it } from "vitest";
import { chartGeometry, polyline } from "../src/lib/model/chart";
import {
  draftFromOffer, errorsByPath, expiresIn, normalizePath, offerFromDraft, pathLabel, toWireNumber,
} from "../src/lib/protocols/anp/counterDraft";
import { declineReason } from "../src/lib/model/decide";
import { positionText, statusWords } from "../src/lib/protocols/anp/diffLabels";
import {
  answeringText, approvalsText, inboxPosition, markOpened, moveSelection, proposalHeading, windowTitle,
} from "../src/lib/model/inbox";
import { shortcutFor } from "../src/lib/model/keyboard";
import { isDecimal, shownEffect, signOf } from "../src/lib/model/money";
import { describeOutcome, describeRefusal } from "../src/lib/model/outcome";
import { toCommandError } from "../src/lib/backend";
import * as fx from "./fixtures";

describe("money meaning", () => {
  it("reads signs exactly", () => {
    expect(signOf("-0.00")).toBe(0);
    expect(signOf("-0.01")).toBe(-1);
    expect(signOf("+3")).toBe(1);
  });
  it("shows the engine's verdict on a change and never guesses one from a field's name", () => {
    expect(shownEffect("better", "-60")).toBe("better");
    expect(shownEffect("worse", "-60")).toBe("worse");
    expect(shownEffect(null, "0")).toBe("same");
    // A price-looking move the engine gave no direction stays without one.
    expect(shownEffect(null, "5000.50")).toBe("neutral");
  });
  it("accepts only plain decimals", () => {
    expect(isDecimal("1140.50")).toBe(true);
    expect(isDecimal("1e3")).toBe(false);
    expect(isDecimal("12,000")).toBe(false);
  });
});

describe("inbox model", () => {
  it("marks an opened row read and lowers the count of the whole inbox", () => {
    const items = fx.inboxItems();
    const page = { items, total: 40, unread: 12, waiting: 30, expired: [] };
    const unreadOne = items.find((i) => i.unread)!;
    const opened = markOpened(page, unreadOne);
    expect(opened.unread).toBe(11);
    expect(opened.total).toBe(40);
    expect(opened.waiting, "opened, it still waits").toBe(30);
    expect(opened.items.find((i) => i.event_hash === unreadOne.event_hash)?.unread).toBe(false);
    expect(markOpened(opened, unreadOne)).toBe(opened);
    expect(markOpened(page, { host_id: "h-x", session_id: "s-x", event_hash: "not-shown" })).toBe(page);
  });
  it("titles the window with the decisions waiting", () => {
    expect(windowTitle(3)).toBe("(3) Countersign");
    expect(windowTitle(0)).toBe("Countersign");
  });
  it("words approvals and clamps selection", () => {
    expect(approvalsText(1, 2)).toBe("1 of 2 approvals");
    expect(approvalsText(0, 1)).toBe("0 of 1 approval");
    expect(moveSelection(0, -1, 3)).toBe(0);
    expect(moveSelection(2, 1, 3)).toBe(2);
    expect(moveSelection(1, 1, 3)).toBe(2);
    expect(moveSelection(0, 1, 0)).toBe(-1);
  });
});

describe("keyboard map", () => {
  const input = document.createElement("input");
  const button = document.createElement("button");
  it("maps the documented keys", () => {
    expect(shortcutFor({ key: "j" })).toBe("next");
    expect(shortcutFor({ key: "k" })).toBe("previous");
    expect(shortcutFor({ key: "a" })).toBe("approve");
    expect(shortcutFor({ key: "d" })).toBe("decline");
    expect(shortcutFor({ key: "c" })).toBe("counter");
    expect(shortcutFor({ key: "/" })).toBe("search");
    expect(shortcutFor({ key: "?" })).toBe("help");
    expect(shortcutFor({ key: "Escape" })).toBe("back");
    expect(shortcutFor({ key: "Enter" })).toBe("open");
  });
  it("never fires letters while typing, but Escape still works", () => {
    expect(shortcutFor({ key: "a", target: input })).toBeNull();
    expect(shortcutFor({ key: "Escape", target: input })).toBe("back");
  });
  it("leaves Enter on buttons and modified keys alone", () => {
    expect(shortcutFor({ key: "Enter", target: button })).toBeNull();
    expect(shortcutFor({ key: "a", ctrlKey: true })).toBeNull();
    expect(shortcutFor({ key: "x" })).toBeNull();
  });
});

describe("counter-offer draft", () => {
  it("round-trips an offer, sending typed prices as the exact JSON numbers they denote", () => {
    const draft = draftFromOffer(fx.currentOffer);
    draft.line_items[1].unit_price = "1079.90";
    const offer = offerFromDraft(draft);
    expect(offer.line_items[1]).toEqual({
      sku: "CRM-ENT", description: "CRM Enterprise seats", quantity: 500, unit: "seat/year", unit_price: 1079.9, currency: "USD",
    });
    expect(offer.term_months).toBe(24);
    expect(offer.conditions).toEqual(["Net 60 payment", "Annual uplift capped at 3%"]);
    expect(offer.total_annual).toBeUndefined();
  });
  it("drops empty optional fields and blank conditions", () => {
    const draft = draftFromOffer({ ...fx.currentOffer, notes: undefined, conditions: undefined });
    draft.conditions.push("   ");
    draft.line_items[0].sku = "";
    const offer = offerFromDraft(draft);
    expect("conditions" in offer).toBe(false);
    expect("notes" in offer).toBe(false);
    expect("sku" in offer.line_items[0]).toBe(false);
  });
  it("keeps, edits and clears a line's own term; every line carries the offer's currency", () => {
    const draft = draftFromOffer({
      ...fx.currentOffer,
      line_items: [{ ...fx.currentOffer.line_items[0], term_months: 12 }, fx.currentOffer.line_items[1]],
    });
    expect(draft.line_items.map((line) => line.term_months)).toEqual(["12", ""]);
    draft.line_items[1].term_months = "6";
    draft.currency = "EUR";
    let offer = offerFromDraft(draft);
    expect(offer.line_items.map((line) => line.term_months)).toEqual([12, 6]);
    expect(offer.line_items.map((line) => line.currency)).toEqual(["EUR", "EUR"]);
    draft.line_items[0].term_months = " ";
    offer = offerFromDraft(draft);
    expect("term_months" in offer.line_items[0]).toBe(false);
  });
  it("sets an expiry some days ahead, to the second in UTC", () => {
    expect(expiresIn(7, new Date("2026-11-29T09:30:15.250Z"))).toBe("2026-12-06T09:30:15Z");
    expect(expiresIn(1, new Date("2026-12-31T23:00:00Z"))).toBe("2027-01-01T23:00:00Z");
  });
  it("sends non-numbers as typed for the engine to refuse", () => {
    const draft = draftFromOffer(fx.currentOffer);
    draft.term_months = "two years";
    expect(offerFromDraft(draft).term_months).toBe("two years");
  });
  it("turns a decimal into a number only when nothing is rounded", () => {
    expect(toWireNumber("875")).toBe(875);
    expect(toWireNumber(" 0.10 ")).toBe(0.1);
    expect(toWireNumber("-0")).toBe(0);
    expect(toWireNumber("007")).toBe(7);
    expect(toWireNumber("12345678901234567.01")).toBe("12345678901234567.01");
    expect(toWireNumber("1e3")).toBe("1e3");
    expect(toWireNumber("12,50")).toBe("12,50");
  });
  it("normalizes every spelling of an error path", () => {
    for (const path of ["/line_items/1/unit_price", "line_items[1].unit_price", "line_items.1.unit_price"]) {
      expect(normalizePath(path)).toBe("line_items.1.unit_price");
    }
    const grouped = errorsByPath([{ path: "/term_months", message: "a" }, { path: "term_months", message: "b" }]);
    expect(grouped.get("term_months")).toEqual(["a", "b"]);
    expect(pathLabel("/line_items/1/unit_price")).toBe("Line 2, unit price");
    expect(pathLabel("conditions[0]")).toBe("Condition 1");
  });
});

describe("decide and outcome words", () => {
  it("requires a real decline reason", () => {
    expect(declineReason("", "")).toBe("");
    expect(declineReason("Other", "  ")).toBe("");
    expect(declineReason("Other", "too slow")).toBe("too slow");
    expect(declineReason("Terms are not acceptable", "")).toBe("Terms are not acceptable");
    expect(declineReason("Terms are not acceptable", "Net 30 only")).toBe("Terms are not acceptable: Net 30 only");
  });
  it("tells each host outcome plainly", () => {
    expect(describeOutcome("approve", { decision_id: "d", outcome: "appended", detail: "", appended: null }).tone).toBe("success");
    expect(describeOutcome("approve", { decision_id: "d", outcome: "awaiting_approvals", detail: "1 of 2", appended: null }).headline)
      .toMatch(/waiting for another approver/);
    expect(describeOutcome("counter", { decision_id: "d", outcome: "held", detail: "budget figure", appended: null }).headline)
      .toMatch(/Held by screening/);
    expect(describeRefusal({ code: "expired", message: "This offer expired at 14:02." }).detail).toBe("This offer expired at 14:02.");
  });
  it("turns any rejection into a readable error", () => {
    expect(toCommandError({ code: "x", message: "Host unreachable." })).toEqual({ code: "x", message: "Host unreachable." });
    expect(toCommandError("plain text")).toEqual({ code: "error", message: "plain text" });
    expect(toCommandError(undefined).message).toMatch(/did not answer/);
  });
  it("words diff statuses", () => {
    const rows = fx.offerDiff().line_items;
    expect(rows.map(statusWords)).toEqual(["moved", "changed, moved", "added", "removed"]);
    expect(positionText(rows[0])).toBe("line 2 → 1");
  });
});

describe("chart geometry", () => {
  it("puts a lower total lower on screen and each proposal across by its seq", () => {
    const chart = chartGeometry(fx.sessionDetail().series);
    const [first, second] = chart.counterparty;
    expect(second.x).toBeGreaterThan(first.x);
    expect(second.y).toBeGreaterThan(first.y);
    expect(chart.ours[0].y).toBeGreaterThan(second.y);
    expect(chart.xTicks.map((t) => t.label)).toEqual(["#1", "#3", "#5"]);
    // Our counter (#3, our round 1) sits between their #1 and #5, not on top of their round 1.
    expect(chart.ours[0].x).toBeGreaterThan(first.x);
    expect(chart.ours[0].x).toBeLessThan(second.x);
    expect(chart.agreed).toBeNull();
    expect(polyline(chart.counterparty)).toBe(`${first.x},${first.y} ${second.x},${second.y}`);
  });
  it("places OANP rounds 1 and 2 apart, and marks the agreed proposal", () => {
    // The merchant's round-1 offer, our round-1 counter, the merchant's round-2 counter, accepted.
    const series = {
      counterparty: [{ round: 1, seq: 3, total: "540000" }, { round: 2, seq: 7, total: "510000" }],
      ours: [{ round: 1, seq: 5, total: "500000" }],
    };
    const chart = chartGeometry(series, 560, 200, 7);
    const xs = [chart.counterparty[0].x, chart.ours[0].x, chart.counterparty[1].x];
    expect(new Set(xs).size).toBe(3);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(chart.agreed).toMatchObject({ seq: 7, total: "510000", x: chart.counterparty[1].x });
  });
  it("copes with one point and with none", () => {
    expect(chartGeometry({ counterparty: [{ round: 1, seq: 1, total: "100" }], ours: [] }).counterparty[0].y).toBeGreaterThan(0);
    expect(chartGeometry({ counterparty: [], ours: [] }).counterparty).toEqual([]);
  });
});

describe("where an offer sits in its session", () => {
  const sent = { kind: "counter_offer" as const, seq: 7, is_draft: false, actor: "vendor_agent" };
  const draft = { kind: "counter_offer" as const, seq: 8, is_draft: true, actor: "buyer" };
  it("names a sent offer by seq and a draft as not sent", () => {
    expect(inboxPosition(sent, "counter-offer")).toBe("counter-offer · seq 7");
    expect(inboxPosition({ ...sent }, "offer")).toBe("offer · seq 7");
    expect(inboxPosition(draft, "draft counter-offer")).toBe("counter-offer · draft, not sent");
  });
  it("says which offer it answers", () => {
    expect(answeringText(sent, { seq: 5, actor: "buyer" })).toBe("seq 7, answering seq 5 (buyer)");
    expect(answeringText(draft, { seq: 7, actor: "vendor_agent" })).toBe("not sent yet, answering seq 7 (vendor)");
    expect(answeringText(sent, null)).toBe("seq 7");
    // Once the draft was approved and sent, it is the entry it became, not "not sent yet".
    expect(answeringText(draft, { seq: 7, actor: "vendor_agent" }, 9)).toBe("sent as seq 9, answering seq 7 (vendor)");
  });
  it("heads a draft as the buyer agent's, to the vendor", () => {
    expect(proposalHeading(draft, "draft counter-offer")).toBe("Buyer agent's draft counter-offer to");
    expect(proposalHeading(sent, "counter-offer")).toBe("Counter-offer from");
    expect(proposalHeading(sent, "offer")).toBe("Offer from");
    expect(proposalHeading(sent, "revised terms", "with")).toBe("Revised terms with");
  });
});
