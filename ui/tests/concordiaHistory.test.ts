/**
 * A Concordia session in history: its timeline of signed messages with each
 * side named, the chart of each side's prices, what its exports hold (the
 * transcript with its keys and the receipts, checked by countersign-verify),
 * and the JSON and CSV exports themselves; an ANP session keeps its own words.
 */
import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";
import { compareDecimals } from "../src/lib/model/money";

async function openSession(detail = fx.concordiaSessionDetail()) {
  const backend = new FakeBackend();
  backend.rows = [detail.row];
  backend.detail = detail;
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  await user.click(byId(rendered.container, "nav-history"));
  await settle();
  await user.click(byId(rendered.container, "history-row"));
  await settle();
  return { ...rendered, backend, user };
}

describe("a Concordia session in history", () => {
  it("says its protocol and counts messages, not events", async () => {
    const { container } = await openSession();
    expect(texts(container, "session-protocol")).toEqual(["Concordia"]);
    expect(texts(container, "session-count")[0]).toBe("9 messages · last amount 42,500 USD");
    expect(byId(container, "session-view").textContent).toContain("Session with Litware Inc");
  });

  it("lays out the timeline of signed messages, each naming its party and side", async () => {
    const { container } = await openSession();
    const rows = [...container.querySelectorAll("[data-testid='timeline-row']")].map((row) =>
      [...row.querySelectorAll("td")].map((cell) => cell.textContent?.trim()));
    expect(rows).toHaveLength(9);
    expect(rows[3].slice(2, 6)).toEqual(["agent_seller_01", "theirs", "Counter-offer", "Counter-offer: 48,000 USD"]);
    expect(rows[8].slice(2, 6)).toEqual(["agent_fabrikam_procurement", "ours", "Accept", "Accepted"]);
    expect([...container.querySelectorAll<HTMLElement>("[data-testid='timeline-side']")].map((c) => c.dataset.side))
      .toEqual(["ours", "counterparty", "ours", "counterparty", "ours", "counterparty", "ours", "counterparty", "ours"]);
    expect(texts(container, "timeline-signature")).toEqual(Array(9).fill("verified"));
    expect([...container.querySelectorAll("[data-testid='decision-row']")].map((row) => row.querySelectorAll("td")[1].textContent))
      .toEqual(["decline", "counter", "approve"]);
  });

  it("charts each side's prices in the order they were made, the agreement marked", async () => {
    const { container } = await openSession();
    expect(texts(container, "series-title")).toEqual(["Prices offered, in the order they were made (USD)"]);
    // One step per proposal, by seq: our 40,000 at #3 comes before their 48,000 at #4, whatever the rounds say.
    expect(texts(container, "series-tick")).toEqual(["#3", "#4", "#6", "#7", "#8"]);
    const xs = (testid: string) => byId(container, testid).getAttribute("points")!.split(" ").map((p) => Number(p.split(",")[0]));
    const [ours3, ours7] = xs("series-ours");
    const [theirs4, theirs6, theirs8] = xs("series-counterparty");
    expect([ours3, theirs4, theirs6, ours7, theirs8]).toEqual([...[ours3, theirs4, theirs6, ours7, theirs8]].sort((a, b) => a - b));
    expect(new Set([ours3, theirs4, theirs6, ours7, theirs8]).size).toBe(5);
    const mark = byId(container, "series-agreed");
    expect(Number(mark.getAttribute("cx"))).toBe(theirs8);
    expect(mark.textContent).toBe("Agreed: 42,500 (#8)");
    expect(byId(container, "series-counterparty").getAttribute("points")!.split(" ")).toHaveLength(3);
    expect(byId(container, "series-ours").getAttribute("points")!.split(" ")).toHaveLength(2);
    expect(byId(container, "totals-chart").querySelector("svg")?.getAttribute("aria-label"))
      .toBe("Counterparty totals 48,000, 45,000, 42,500; our totals 40,000, 40,000; agreed 42,500 at #8");
  });

  it("says what its exports hold and how the JSON is checked, then writes them", async () => {
    const { container, backend, user } = await openSession();
    const hint = texts(container, "export-hint")[0];
    expect(hint).toContain("the signed transcript with every party's key and the ApprovalReceipts you signed");
    expect(hint).toContain("countersign-verify checks the file as it is");
    await user.click(byId(container, "export-json"));
    await settle();
    await user.click(byId(container, "export-csv"));
    await settle();
    expect(backend.exports).toEqual(["json", "csv"]);
    expect(texts(container, "export-path")[0]).toMatch(/^Written to .+\.csv \(/);
  });

  it("leaves an ANP session in its own words", async () => {
    const { container } = await openSession(fx.sessionDetail());
    expect(texts(container, "session-count")[0]).toBe("6 events · last amount 540,000 USD");
    expect(texts(container, "series-title")).toEqual(["Offer totals in the order they were made (USD)"]);
    expect(texts(container, "export-hint")[0]).toContain("the hash-chained log");
  });
});

describe("exact decimal comparison", () => {
  it("orders decimal strings exactly, whatever their zeros, and refuses what is not one", () => {
    expect(compareDecimals("150000.00", "150000")).toBe(0);
    expect(compareDecimals("48000", "250000")).toBe(-1);
    expect(compareDecimals("100000.01", "100000")).toBe(1);
    expect(compareDecimals("0099.5", "99.49")).toBe(1);
    expect(compareDecimals("-5", "3")).toBe(-1);
    expect(compareDecimals("-5", "-30")).toBe(1);
    expect(compareDecimals("-0", "0")).toBe(0);
    expect(compareDecimals("12345678901234567890.1", "12345678901234567890.09")).toBe(1);
    expect(compareDecimals("1e5", "1")).toBeNull();
  });
});
