import { describe, expect, it } from "vitest";
import {
  auditPackQuery, currentYear, deskQuery, figureKey, figureTitle, maybeSameNames, moneyLines, moneyLineText, partyAsk,
  refusedField, responseTimeText, verifyCommand, waitText, wonPercent,
} from "../src/lib/model/desk";
import { monthPanels, monthSpan, niceStep, panelSummary, winPanels } from "../src/lib/model/deskChart";
import * as fmt from "../src/lib/model/format";
import * as dfx from "./deskFixtures";
import * as fx from "./fixtures";

const en = { locale: "en-GB", timeZone: "UTC" };

describe("the desk's words", () => {
  it("writes waits as people write spans, two units at most", () => {
    expect(waitText(12000)).toBe("3 h 20 min");
    expect(waitText(90061)).toBe("1 d 1 h");
    expect(waitText(600)).toBe("10 min");
    expect(waitText(45)).toBe("45 s");
    expect(waitText(0)).toBe("0 s");
    expect(waitText(null)).toBe("—");
    expect(responseTimeText(240)).toBe("4 h");
    expect(responseTimeText(90)).toBe("1 h 30 min");
    expect(responseTimeText(null)).toBe("—");
  });

  it("shows each currency on its own line and never adds currencies together", () => {
    const lines = moneyLines(dfx.deskOverview().money);
    expect(lines.map((l) => l.currency)).toEqual(["EUR", "USD"]);
    expect(lines[0]).toEqual({
      currency: "EUR", sessions: "1", agreedSessions: "1", agreed: "12,000 EUR", opening: "13,500 EUR", won: "1,500 EUR", wonPercent: "11.11%",
    });
    expect(lines[1].agreed).toBe("665,000.50 USD");
    expect(lines[1].won).toBe("54,999.50 USD");
    // 12,000 + 665,000.50 would be 677,000.50: no such figure exists anywhere.
    expect(JSON.stringify(lines)).not.toContain("677");
    for (const line of lines) {
      for (const amount of [line.agreed, line.opening, line.won]) expect(amount.endsWith(` ${line.currency}`)).toBe(true);
    }
    expect(moneyLines(dfx.contosoRow().money).map(moneyLineText)).toEqual([
      "12,000 EUR agreed · won 1,500 EUR (11.11%)", "540,000 USD agreed · won 60,000 USD (10.00%)",
    ]);
    expect(moneyLineText(moneyLines([{ currency: "JPY", sessions: 1, agreed_sessions: 0, agreed_total: "0", opening_total: "0", won: "0",
      won_percent: null }])[0])).toBe("nothing agreed yet in JPY");
  });

  it("keeps amounts exact, digit for digit, in the person's marks", () => {
    fmt.setFormatContext({ locale: "de-DE", timeZone: "Europe/Berlin" });
    const [line] = moneyLines([{ currency: "USD", sessions: 12345, agreed_sessions: 1, agreed_total: "9007199254740993.01",
      opening_total: "9007199254740999", won: "5.99", won_percent: "0.01" }]);
    expect(line.agreed).toBe("9.007.199.254.740.993,01 USD");
    expect(line.sessions).toBe("12.345");
    expect(line.wonPercent).toBe("0,01%");
  });

  it("writes what was won as a share of the opening asks, a loss with a true minus", () => {
    expect(wonPercent("11.11")).toBe("11.11%");
    expect(wonPercent("-4.17")).toBe("−4.17%");
    expect(wonPercent(null)).toBe("—");
  });

  it("starts on the current year in the person's zone", () => {
    expect(currentYear(fx.NOW, en)).toEqual({ from: "2026-01-01", to: "2026-12-31", protocol: "" });
    // New Year's Eve in London is already New Year's Day in Auckland.
    const eve = Date.parse("2026-12-31T23:30:00Z");
    expect(currentYear(eve, en).from).toBe("2026-01-01");
    expect(currentYear(eve, { locale: "en-NZ", timeZone: "Pacific/Auckland" }).from).toBe("2027-01-01");
  });

  it("asks the engine only for what was chosen", () => {
    expect(deskQuery({ from: "2026-01-01", to: "", protocol: "" })).toEqual({ from: "2026-01-01" });
    expect(deskQuery({ from: " 2026-01-01 ", to: "2026-03-31", protocol: "concordia" }))
      .toEqual({ from: "2026-01-01", to: "2026-03-31", protocol: "concordia" });
  });

  it("names each figure's sessions and tells figures apart", () => {
    expect(figureTitle({ figure: "currency", currency: "USD" })).toBe("Sessions with money in USD");
    expect(figureTitle({ figure: "agreed", currency: "EUR" })).toBe("Sessions agreed in EUR");
    expect(figureTitle({ figure: "person", person: "ana@buyer.example", role: "finance" })).toBe("Sessions decided by ana@buyer.example as finance");
    expect(figureTitle({ figure: "person", person: "ana@buyer.example", role: null })).toBe("Sessions decided by ana@buyer.example (no role)");
    expect(figureTitle({ figure: "counterparty", id: "cp_x" }, "Contoso GmbH")).toBe("Sessions with Contoso GmbH");
    expect(figureKey({ figure: "person", person: "a", role: null })).not.toBe(figureKey({ figure: "person", person: "a", role: "buyer" }));
    expect(figureKey({ figure: "currency", currency: "USD" })).not.toBe(figureKey({ figure: "agreed", currency: "USD" }));
  });

  it("names the counterparties a row may be the same as", () => {
    const rows = dfx.deskOverview().counterparties;
    expect(maybeSameNames(rows[0], rows)).toEqual(["Contoso GmbH"]);
    expect(maybeSameNames({ ...rows[0], maybe_same_as: ["cp_gone"] }, rows)).toEqual(["cp_gone"]);
  });

  it("counts a counterparty page's figure over that counterparty's sessions only", () => {
    const page = dfx.contosoPage();
    const rows = [
      { ...fx.sessionRows()[0], session_id: "s-contoso-2" },
      { ...fx.sessionRows()[0], session_id: "s-contoso", breaches: 1 },
      { ...fx.sessionRows()[1], session_id: "concordia:c-1" },
    ];
    const kept = (ask: ReturnType<typeof partyAsk>) => rows.filter(ask.keep ?? (() => true)).map((r) => r.session_id);
    const usd = partyAsk(page, { kind: "currency", currency: "USD" });
    expect(usd.figure).toEqual({ figure: "counterparty", id: "cp_contoso" });
    expect(kept(usd)).toEqual(["s-contoso-2", "s-contoso"]);
    expect(kept(partyAsk(page, { kind: "agreed", currency: "USD" }))).toEqual(["s-contoso-2"]);
    expect(kept(partyAsk(page, { kind: "state", protocol: "ANP/0.1", state: "open" }))).toEqual(["s-contoso"]);
    expect(kept(partyAsk(page, { kind: "past_response_time" }))).toEqual(["s-contoso-2"]);
    expect(kept(partyAsk(page, { kind: "action", action: "decline" }))).toEqual(["s-contoso"]);
    expect(kept(partyAsk(page, { kind: "breaches" }))).toEqual(["s-contoso"]);
    expect(kept(partyAsk(page, { kind: "disputes" }))).toEqual(["concordia:c-1"]);
    expect(kept(partyAsk(page, { kind: "all" }))).toEqual(["s-contoso-2", "s-contoso", "concordia:c-1"]);
  });
});

describe("the audit pack's query", () => {
  const blank = { from: "", to: "", action: "", minTotal: "", currency: "", protocol: "", counterparty: "" };

  it("sends only what was filled, an amount with grouping commas as its plain decimal, the currency in capitals", () => {
    expect(auditPackQuery(blank)).toEqual({});
    expect(auditPackQuery({ ...blank, from: "2026-01-01", to: "2026-06-30", action: "approve", minTotal: "100,000", currency: " usd ",
      protocol: "ANP/0.1", counterparty: "cp_contoso" })).toEqual({
      from: "2026-01-01", to: "2026-06-30", action: "approve", min_total: "100000", currency: "USD", protocol: "ANP/0.1", counterparty: "cp_contoso",
    });
  });

  it("leaves judging the amount and its currency to the engine", () => {
    expect(auditPackQuery({ ...blank, minTotal: "lots" })).toEqual({ min_total: "lots" });
    expect(auditPackQuery({ ...blank, minTotal: "250000" })).toEqual({ min_total: "250000" });
  });

  it("marks the field an engine refusal names", () => {
    expect(refusedField("currency must be a three-letter code like USD when min_total is given (…).")).toBe("currency");
    expect(refusedField("min_total must be a decimal amount like 100000, not \"lots\".")).toBe("min_total");
    expect(refusedField("from (2026-12-31) must not be after to (2026-01-01).")).toBe("from");
    expect(refusedField("The local database failed.")).toBeNull();
  });

  it("gives the command that verifies the pack, quoted for a shell where it must be", () => {
    expect(verifyCommand("/data/countersign/exports/audit-pack-20261129120000"))
      .toBe("countersign-verify pack /data/countersign/exports/audit-pack-20261129120000");
    expect(verifyCommand("/home/ann/My Data/exports/pack")).toBe("countersign-verify pack '/home/ann/My Data/exports/pack'");
    expect(verifyCommand("/tmp/o'neil/pack")).toBe("countersign-verify pack '/tmp/o'\\''neil/pack'");
  });
});

describe("months and days for the desk's axes", () => {
  it("writes a month and a short day in the person's format", () => {
    expect(fmt.month("2026-03")).toBe("Mar 2026");
    expect(fmt.month("2026-03", false)).toBe("Mar");
    expect(fmt.month("2026-13")).toBe("2026-13");
    expect(fmt.month("2026-03", true, { locale: "de-DE" })).toMatch(/^März 2026$/);
    expect(fmt.shortDay("2026-03-01T08:00:00Z", fx.NOW)).toBe("1 Mar");
    expect(fmt.shortDay("2025-03-01T08:00:00Z", fx.NOW)).toBe("1 Mar 2025");
    expect(fmt.today(fx.NOW)).toBe("2026-11-29");
  });
});

describe("the desk's charts", () => {
  it("draws one panel per currency, over every month from the first to the last, exact figures in its table", () => {
    const panels = monthPanels(dfx.deskOverview().months);
    expect(panels.map((p) => p.currency)).toEqual(["EUR", "USD"]);
    const usd = panels[1];
    expect(usd.rows.map((r) => r.label)).toEqual(["Mar 2026", "Apr 2026", "May 2026", "Jun 2026"]);
    // April and May agreed nothing in USD (May's EUR is another panel's): zero, never EUR's 12,000.
    expect(usd.rows.map((r) => r.values)).toEqual([
      ["540,000 USD", "60,000 USD"], ["0 USD", "0 USD"], ["0 USD", "0 USD"], ["125,000.50 USD", "−5,000.50 USD"],
    ]);
    expect(panels[0].rows[2].values).toEqual(["12,000 EUR", "1,500 EUR"]);
    expect(usd.series.map((s) => s.kind)).toEqual(["agreed", "won"]);
    expect(usd.series[0].points.map((p) => p.value)).toEqual(["540000", "0", "0", "125000.50"]);
    // Panels share one time axis.
    expect(panels[0].xTicks).toEqual(usd.xTicks);
    expect(usd.xTicks.map((t) => t.label)).toEqual(["Mar 2026", "Apr", "May", "Jun"]);
  });

  it("labels its scale in round numbers of the person's format, zero included", () => {
    const [usd] = monthPanels([{ month: "2026-01", currency: "USD", agreed_total: "540000", won: "-5000.50" }]);
    const labels = usd.yTicks.map((t) => t.label);
    expect(labels).toContain("0");
    expect(labels).toContain("−200,000");
    expect(labels.at(-1)).toBe("600,000");
    expect(usd.zeroY).not.toBeNull();
    fmt.setFormatContext({ locale: "de-DE", timeZone: "UTC" });
    const [de] = monthPanels([{ month: "2026-01", currency: "USD", agreed_total: "540000", won: "0" }]);
    expect(de.yTicks.at(-1)!.label).toBe("600.000");
    expect(de.xTicks[0].label).toMatch(/^Jan\.? 2026$/);
  });

  it("says every panel in words, exact amounts included", () => {
    const [eur] = monthPanels(dfx.deskOverview().months);
    expect(panelSummary(eur, "Agreed and won per month")).toBe(
      "Agreed and won per month in EUR. agreed: Mar 2026 0 EUR, Apr 2026 0 EUR, May 2026 12,000 EUR, Jun 2026 0 EUR; "
      + "won against opening asks: Mar 2026 0 EUR, Apr 2026 0 EUR, May 2026 1,500 EUR, Jun 2026 0 EUR.");
  });

  it("places a counterparty's opening asks against what was agreed, per currency", () => {
    const panels = winPanels(dfx.contosoPage().sessions, 560, 200, fx.NOW);
    expect(panels.map((p) => p.currency)).toEqual(["EUR", "USD"]);
    const usd = panels[1];
    expect(usd.series.find((s) => s.kind === "opening")!.points.map((p) => p.value)).toEqual(["600000", "585000"]);
    expect(usd.series.find((s) => s.kind === "agreed")!.points.map((p) => p.value)).toEqual(["540000"]);
    expect(usd.rows.map((r) => r.values)).toEqual([["600,000 USD", "540,000 USD"], ["585,000 USD", null]]);
    expect(usd.xTicks.map((t) => t.label)).toEqual(["1 Mar", "27 Nov"]);
    // An opening ask in another currency than the agreement (no win named) is left out.
    const mixed = winPanels([{ ...dfx.contosoPage().sessions[0], opening: "1", won: null, won_percent: null }], 560, 200, fx.NOW);
    expect(mixed[0].series.find((s) => s.kind === "opening")!.points).toEqual([]);
    expect(winPanels(dfx.contoso2Page().sessions)).toEqual([]);
  });

  it("steps in ones, twos and fives, and spans months across a year", () => {
    expect(niceStep(600000)).toBe(200000);
    expect(niceStep(10)).toBe(5);
    expect(niceStep(0.3)).toBeCloseTo(0.1);
    expect(monthSpan("2025-11", "2026-02")).toEqual(["2025-11", "2025-12", "2026-01", "2026-02"]);
  });
});
