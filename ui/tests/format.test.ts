/**
 * The formatting rules, checked as the text a person reads: grouping in each
 * locale's marks, exact decimals, currency, spans, relative times, and
 * absolute times across a day boundary, a year and time zones.
 */
import { afterEach, describe, expect, it } from "vitest";
import * as fmt from "../src/lib/model/format";

const at = (iso: string) => Date.parse(iso);
const gb: fmt.FormatContext = { locale: "en-GB", timeZone: "UTC" };

afterEach(() => fmt.setFormatContext({ locale: "en-GB", timeZone: "UTC" }));

describe("grouping", () => {
  it("groups thousands without touching the digits", () => {
    expect(fmt.amount("1140000.50", gb)).toBe("1,140,000.50");
    expect(fmt.amount("999", gb)).toBe("999");
    expect(fmt.amount("1000", gb)).toBe("1,000");
    expect(fmt.amount("0.10", gb)).toBe("0.10");
  });
  it("keeps digits a float would lose", () => {
    expect(fmt.amount("12345678901234567.01", gb)).toBe("12,345,678,901,234,567.01");
    expect(fmt.amount("0.1000000000000000055511151231257827", gb)).toBe("0.1000000000000000055511151231257827");
  });
  it("uses each locale's own marks", () => {
    expect(fmt.amount("1140000.50", { locale: "de-DE" })).toBe("1.140.000,50");
    expect(fmt.amount("1140000.50", { locale: "fr-FR" })).toBe("1\u202f140\u202f000,50");
    expect(fmt.amount("1234", { locale: "es-ES" })).toBe("1234");
    expect(fmt.amount("12345.6", { locale: "es-ES" })).toBe("12.345,6");
    expect(fmt.amount("1234", { locale: "en-US" })).toBe("1,234");
  });
  it("signs with a true minus and leaves text that is not a decimal alone", () => {
    expect(fmt.amount("-30000", gb)).toBe("−30,000");
    expect(fmt.amount("-0.00", gb)).toBe("0.00");
    for (const text of ["1e6", "12,000", "abc", ""]) expect(fmt.amount(text, gb)).toBe(text);
  });
  it("signs changes so meaning never rests on colour", () => {
    expect(fmt.signed("-30000", gb)).toBe("−30,000");
    expect(fmt.signed("5000.50", gb)).toBe("+5,000.50");
    expect(fmt.signed("0.00", gb)).toBe("0");
    expect(fmt.percent("-5.26", gb)).toBe("−5.26%");
    expect(fmt.percent(null, gb)).toBe("");
  });
  it("counts as numbers are written", () => {
    expect(fmt.count(1234, gb)).toBe("1,234");
    expect(fmt.count(1234, { locale: "de-DE" })).toBe("1.234");
  });
});

describe("currency", () => {
  it("writes the code after the grouped amount", () => {
    expect(fmt.money("570000", "USD", gb)).toBe("570,000 USD");
    expect(fmt.money("72000", "EUR", { locale: "de-DE" })).toBe("72.000 EUR");
    expect(fmt.money("5", null, gb)).toBe("5");
  });
});

describe("spans and relative times", () => {
  it("reads in two units, rounded down", () => {
    expect(fmt.duration(2 * 86_400 + 23 * 3_600 + 59 * 60 + 59)).toBe("2 d 23 h");
    expect(fmt.duration(3 * 86_400)).toBe("3 d");
    expect(fmt.duration(3 * 3_600 + 5 * 60 + 9)).toBe("3 h 5 min");
    expect(fmt.duration(12 * 60 + 4)).toBe("12 min 4 s");
    expect(fmt.duration(45)).toBe("45 s");
  });
  it("says which way", () => {
    const now = at("2026-12-01T07:00:00Z");
    expect(fmt.relative("2026-12-04T06:53:48.735Z", now)).toBe("in 2 d 23 h");
    expect(fmt.relative("2026-12-01T06:57:00Z", now)).toBe("3 min ago");
    expect(fmt.relative("2026-12-01T07:00:00Z", now)).toBe("now");
    // The exact difference counts: a day less 100 ms is not yet a day.
    expect(fmt.relative("2026-12-02T07:00:00.000Z", at("2026-12-01T07:00:00.100Z"))).toBe("in 23 h 59 min");
  });
  it("counts down to an expiry and says when it is over", () => {
    const now = at("2026-11-29T12:00:00Z");
    expect(fmt.countdown("2026-12-01T16:00:00Z", now).text).toBe("2 d 4 h");
    expect(fmt.countdown("2026-11-29T12:00:45Z", now)).toEqual({ text: "45 s", expired: false, urgent: true });
    expect(fmt.countdown("2026-11-29T12:00:00Z", now)).toEqual({ text: "expired", expired: true, urgent: true });
    expect(fmt.countdown("soon", now).text).toBe("unknown expiry");
  });
});

describe("absolute times", () => {
  const now = at("2026-12-01T07:00:00Z");
  it("reads the issue's example as written", () => {
    expect(fmt.amountAndExpiry("570000", "USD", "2026-12-04T06:53:48.735Z", now, gb))
      .toBe("570,000 USD · expires in 2 d 23 h (Fri 4 Dec, 06:53)");
  });
  it("crosses a day boundary with the zone", () => {
    // 20:30 UTC on Thursday is Friday morning in Tokyo and Thursday afternoon in New York.
    const late = "2026-12-03T20:30:00Z";
    expect(fmt.absolute(late, now, gb)).toBe("Thu 3 Dec, 20:30");
    expect(fmt.absolute(late, now, { locale: "en-GB", timeZone: "Asia/Tokyo" })).toBe("Fri 4 Dec, 05:30");
    expect(fmt.absolute(late, now, { locale: "en-GB", timeZone: "America/New_York" })).toBe("Thu 3 Dec, 15:30");
  });
  it("follows summer time", () => {
    const berlin = { locale: "en-GB", timeZone: "Europe/Berlin" };
    expect(fmt.absolute("2026-07-01T12:00:00Z", at("2026-06-01T00:00:00Z"), berlin)).toBe("Wed 1 Jul, 14:00");
    expect(fmt.absolute("2026-12-03T20:30:00Z", now, berlin)).toBe("Thu 3 Dec, 21:30");
  });
  it("shows the year only outside the current one, in the zone's calendar", () => {
    const eve = at("2026-12-30T12:00:00Z");
    expect(fmt.absolute("2027-01-02T09:05:00Z", eve, gb)).toBe("Sat 2 Jan 2027, 09:05");
    expect(fmt.absolute("2026-12-31T20:00:00Z", eve, { locale: "en-GB", timeZone: "Asia/Tokyo" })).toBe("Fri 1 Jan 2027, 05:00");
    expect(fmt.absolute("2026-12-31T20:00:00Z", eve, gb)).toBe("Thu 31 Dec, 20:00");
    // One shape with or without the year (no comma after the weekday in one and not the other).
    expect(fmt.absolute("2027-03-04T11:03:00Z", eve, gb)).toBe("Thu 4 Mar 2027, 11:03");
  });
  it("writes each locale's date", () => {
    const t = "2026-12-04T18:53:48Z";
    expect(fmt.absolute(t, now, { locale: "de-DE", timeZone: "UTC" })).toBe("Fr., 4. Dez., 18:53");
    expect(fmt.absolute(t, now, { locale: "fr-FR", timeZone: "UTC" })).toBe("ven. 4 déc., 18:53");
    // As crates/humanize writes it: U+202F before PM, whatever the webview's ICU does.
    expect(fmt.absolute(t, now, { locale: "en-US", timeZone: "UTC" })).toBe("Fri, Dec 4, 06:53\u202fPM");
    expect(fmt.absolute(t, now, { locale: "es-ES", timeZone: "UTC" })).toBe("vie, 4 dic, 18:53");
    expect(fmt.absolute(t, now, { locale: "nl-NL", timeZone: "UTC" })).toBe("vr 4 dec, 18:53");
    // A language with no built-in order is written in Intl's own.
    expect(fmt.absolute(t, now, { locale: "ja-JP", timeZone: "UTC" }))
      .toBe(new Intl.DateTimeFormat("ja-JP", { weekday: "short", day: "numeric", month: "short", hour: "2-digit",
        minute: "2-digit", timeZone: "UTC" }).format(new Date(t)));
  });
  it("says an expiry that passed, and shows text that is not a time as given", () => {
    expect(fmt.expiry("2026-12-01T06:57:00Z", now, gb)).toBe("expired 3 min ago (Tue 1 Dec, 06:57)");
    expect(fmt.expiry("next tuesday", now, gb)).toBe("expires next tuesday");
    expect(fmt.absolute(null, now, gb)).toBe("—");
  });
});

describe("the context", () => {
  it("is what the engine reports, and an unusable one falls back without throwing", () => {
    fmt.setFormatContext({ locale: "de-DE", timeZone: "Europe/Berlin" });
    expect(fmt.money("570000", "USD")).toBe("570.000 USD");
    fmt.setFormatContext({ locale: "de-DE", timeZone: "Mars/Olympus_Mons" });
    expect(fmt.formatContext()).toEqual({ locale: "de-DE" });
    fmt.setFormatContext({ locale: "not a locale!", timeZone: null });
    expect(fmt.formatContext().locale).toBe("en-GB");
    expect(fmt.money("1000", "USD")).toBe("1,000 USD");
  });
});
