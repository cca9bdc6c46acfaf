import { fireEvent } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import * as dfx from "./deskFixtures";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";

async function openDesk(backend = new FakeBackend()) {
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  await user.click(byId(rendered.container, "nav-desk"));
  await settle();
  return { ...rendered, user };
}

async function openContoso(backend = new FakeBackend()) {
  const opened = await openDesk(backend);
  const row = opened.container.querySelector<HTMLElement>("[data-testid='desk-counterparty-row'][data-id='cp_contoso']")!;
  await opened.user.click(row.querySelector<HTMLElement>("[data-testid='desk-counterparty-open']")!);
  await settle();
  return opened;
}

/** Each table row's cells' text, row by row. */
function cells(container: HTMLElement, testid: string): string[][] {
  return [...container.querySelectorAll(`[data-testid='${testid}']`)].map((row) =>
    [...row.querySelectorAll("th, td")].map((cell) => (cell.textContent ?? "").replace(/\s+/g, " ").trim()));
}

/** Sets a date input as a date picker does. */
async function setDay(input: HTMLElement, day: string) {
  await fireEvent.input(input, { target: { value: day } });
  await settle();
}

describe("the desk", () => {
  it("draws a thousand counterparties fifty at a time", async () => {
    const backend = new FakeBackend();
    const base = dfx.contosoRow();
    const many = Array.from({ length: 120 }, (_, i) => ({ ...base, id: `cp_${i}`, name: `Vendor ${i}`, maybe_same_as: [] }));
    backend.deskNow = { ...dfx.deskOverview(), counterparties: many };
    const { container, user } = await openDesk(backend);
    expect(container.querySelectorAll("[data-testid='desk-counterparty-row']").length).toBe(50);
    expect(byId(container, "desk-counterparties-more").textContent).toContain("70 not shown");
    await user.click(byId(container, "desk-counterparties-more"));
    await settle();
    expect(container.querySelectorAll("[data-testid='desk-counterparty-row']").length).toBe(100);
    await user.click(byId(container, "desk-counterparties-more"));
    await settle();
    expect(container.querySelectorAll("[data-testid='desk-counterparty-row']").length).toBe(120);
    expect(container.querySelector("[data-testid='desk-counterparties-more']")).toBeNull();
  });

  it("opens from the navigation on the current year and asks the engine for it", async () => {
    const { container, backend } = await openDesk();
    expect(byId(container, "desk")).toBeTruthy();
    expect(byId(container, "nav-desk").getAttribute("aria-current")).toBe("page");
    expect(backend.deskQueries).toEqual([{ from: "2026-01-01", to: "2026-12-31" }]);
    expect(byId<HTMLInputElement>(container, "desk-from").value).toBe("2026-01-01");
    expect(byId<HTMLInputElement>(container, "desk-to").value).toBe("2026-12-31");
  });

  it("shows money per currency, one row each and never a total across currencies", async () => {
    const { container } = await openDesk();
    const money = byId(container, "desk-money");
    expect(cells(money, "desk-money-row")).toEqual([
      ["EUR", "1", "1", "12,000 EUR", "13,500 EUR", "1,500 EUR", "11.11%"],
      ["USD", "5", "2", "665,000.50 USD", "720,000 USD", "54,999.50 USD", "7.64%"],
    ]);
    // 12,000 EUR and 665,000.50 USD are never added up: no total row, no 677,000.50.
    expect(money.querySelectorAll("tfoot")).toHaveLength(0);
    expect(money.textContent).not.toContain("677,000");
  });

  it("shows the engine's sentence for a range it refuses, and the figures again once it is one", async () => {
    const { container, backend } = await openDesk();
    await setDay(byId(container, "desk-from"), "2026-12-31");
    await setDay(byId(container, "desk-to"), "2026-01-01");
    expect(byId(container, "desk-error").textContent).toBe("from (2026-12-31) must not be after to (2026-01-01).");
    expect(container.querySelector("[data-testid='desk-money']")).toBeNull();
    await setDay(byId(container, "desk-to"), "2026-12-31");
    expect(container.querySelector("[data-testid='desk-error']")).toBeNull();
    expect(byId(container, "desk-money")).toBeTruthy();
    expect(backend.deskQueries.at(-1)).toEqual({ from: "2026-12-31", to: "2026-12-31" });
  });

  it("filters by protocol", async () => {
    const { container, backend, user } = await openDesk();
    await user.selectOptions(byId(container, "desk-protocol"), "concordia");
    await settle();
    expect(backend.deskQueries.at(-1)).toEqual({ from: "2026-01-01", to: "2026-12-31", protocol: "concordia" });
  });

  it("opens the sessions behind a figure, and each of them as History does", async () => {
    const { container, backend, user } = await openDesk();
    const usd = container.querySelector<HTMLElement>("[data-testid='desk-money-row'][data-currency='USD']")!;
    await user.click(usd.querySelector<HTMLElement>("[data-figure='agreed']")!);
    await settle();
    expect(backend.figureAsks.at(-1)).toEqual({ query: { from: "2026-01-01", to: "2026-12-31" }, figure: { figure: "agreed", currency: "USD" } });
    const list = byId(container, "desk-figure-sessions");
    expect(byId(list, "desk-figure-title").textContent).toBe("Sessions agreed in USD");
    expect(document.activeElement).toBe(byId(list, "desk-figure-title"));
    expect(texts(list, "desk-figure-session")).toHaveLength(2);
    await user.click(list.querySelectorAll<HTMLElement>("[data-testid='desk-figure-session']")[1]);
    await settle();
    expect(byId(container, "session-view")).toBeTruthy();
    expect(backend.detailRefs.at(-1)).toEqual({ host_id: "h-sandbox", session_id: "s-fabrikam" });
    expect(byId(container, "nav-desk").getAttribute("aria-current")).toBe("page");
    expect(byId(container, "back-button").textContent).toBe("← Desk");
    await user.click(byId(container, "back-button"));
    await settle();
    // Back where the person was: the desk, the figure still open.
    expect(byId(container, "desk-figure-title").textContent).toBe("Sessions agreed in USD");
  });

  it("asks for each kind of figure by its own name", async () => {
    const { container, backend, user } = await openDesk();
    const click = async (el: Element) => { await user.click(el as HTMLElement); await settle(); };
    await click(byId(container, "desk-sessions"));
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "all" });
    await click(byId(container, "desk-breaches"));
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "breaches" });
    await click(byId(container, "desk-disputes"));
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "disputes" });
    await click(byId(container, "desk-waits-past"));
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "past_response_time" });
    await click(container.querySelector("[data-testid='desk-money-row'][data-currency='EUR'] [data-figure='currency']")!);
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "currency", currency: "EUR" });
    const grace = container.querySelector("[data-testid='desk-person-row'][data-person='grace@buyer.example']")!;
    await click(grace.querySelector("[data-figure='person']")!);
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "person", person: "grace@buyer.example", role: "buyer" });
    const noRole = container.querySelector("[data-testid='desk-person-row'][data-person='ana@buyer.example'][data-role='']")!;
    await click(noRole.querySelector("[data-figure='person']")!);
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "person", person: "ana@buyer.example", role: null });
    const fabrikam = container.querySelector("[data-testid='desk-counterparty-row'][data-id='cp_fabrikam']")!;
    await click(fabrikam.querySelector("[data-figure='counterparty']")!);
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "counterparty", id: "cp_fabrikam" });
    expect(byId(container, "desk-figure-title").textContent).toBe("Sessions with Fabrikam Inc");
    await click(byId(container, "desk-figure-close"));
    expect(container.querySelector("[data-testid='desk-figure-sessions']")).toBeNull();
  });

  it("shows waits as spans, which went past their response time, and the slowest first", async () => {
    const { container } = await openDesk();
    expect(byId(container, "desk-waits-median").textContent).toBe("3 h 20 min");
    expect(byId(container, "desk-waits-p90").textContent).toBe("1 d 1 h");
    expect(byId(container, "desk-waits-past").textContent).toBe("1");
    expect(texts(container, "desk-waits-wait")).toEqual(["1 d 1 h", "3 h 20 min"]);
    expect(texts(container, "desk-waits-late")).toEqual(["past it"]);
  });

  it("draws agreed and won per month, a panel per currency, said in words too", async () => {
    const { container } = await openDesk();
    const chart = byId(container, "desk-chart");
    const panels = [...chart.querySelectorAll<HTMLElement>("[data-testid='desk-chart-currency']")];
    expect(panels.map((p) => p.dataset.currency)).toEqual(["EUR", "USD"]);
    const svg = panels[1].querySelector("svg")!;
    expect(svg.getAttribute("role")).toBe("img");
    expect(svg.getAttribute("aria-label")).toContain("Jun 2026 125,000.50 USD");
    expect(texts(panels[1], "desk-chart-xtick")).toEqual(["Mar 2026", "Apr", "May", "Jun"]);
    expect(texts(panels[1], "desk-chart-ytick")).toContain("0");
    const table = byId(panels[1], "desk-chart-table");
    expect([...table.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent))).toEqual([
      ["Mar 2026", "540,000 USD", "60,000 USD"], ["Apr 2026", "0 USD", "0 USD"], ["May 2026", "0 USD", "0 USD"],
      ["Jun 2026", "125,000.50 USD", "−5,000.50 USD"],
    ]);
  });

  it("lists counterparties, saying which may be the same organization", async () => {
    const { container } = await openDesk();
    const rows = [...container.querySelectorAll<HTMLElement>("[data-testid='desk-counterparty-row']")];
    expect(rows.map((r) => r.dataset.id)).toEqual(["cp_contoso", "cp_fabrikam", "cp_contoso2"]);
    expect(texts(rows[0], "desk-counterparty-maybe")).toEqual(["May be the same as Contoso GmbH"]);
    expect(texts(rows[1], "desk-counterparty-maybe")).toEqual([]);
    expect(texts(rows[2], "desk-counterparty-maybe")).toEqual(["May be the same as Contoso GmbH"]);
    const money = byId(rows[0], "desk-counterparty-money");
    expect([...money.querySelectorAll("[data-currency]")].map((d) => d.textContent)).toEqual([
      "12,000 EUR agreed · won 1,500 EUR (11.11%)", "540,000 USD agreed · won 60,000 USD (10.00%)",
    ]);
    expect(rows[0].textContent).toContain("3 h 20 min");
    expect(texts(rows[0], "desk-counterparty-protocol")).toEqual(["ANP", "Concordia"]);
  });

  it("writes each list as CSV and says where", async () => {
    const { container, backend, user } = await openDesk();
    const lists = [...container.querySelectorAll<HTMLElement>("[data-testid='desk-csv']")].map((b) => b.dataset.list);
    expect(lists).toEqual(["waits", "people", "counterparties"]);
    await user.click(container.querySelector<HTMLElement>("[data-testid='desk-csv'][data-list='counterparties']")!);
    await settle();
    expect(backend.deskCsvs.at(-1)).toEqual({ query: { from: "2026-01-01", to: "2026-12-31" }, list: { list: "counterparties" } });
    expect(byId(container, "desk-csv-path").textContent).toBe("Written to /data/countersign/exports/desk-counterparties-20261129120000.csv (1,234 bytes).");
    await user.click(byId(container, "desk-sessions"));
    await settle();
    await user.click(byId(container, "desk-figure-sessions").querySelector<HTMLElement>("[data-testid='desk-csv']")!);
    await settle();
    expect(backend.deskCsvs.at(-1)!.list).toEqual({ list: "sessions", figure: { figure: "all" } });
  });

  it("renders counterparty text as text", async () => {
    const backend = new FakeBackend();
    const overview = dfx.deskOverview();
    const hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>";
    overview.counterparties[0].name = hostile;
    overview.slowest[0].counterparty = hostile;
    backend.deskNow = overview;
    const { container } = await openDesk(backend);
    expect(container.querySelector("img, script")).toBeNull();
    expect(byId(container, "desk-counterparties").textContent).toContain(hostile);
    expect(byId(container, "desk-waits").textContent).toContain(hostile);
  });
});

describe("a counterparty's page", () => {
  it("shows its identities, flagging a key changed mid-session, its sessions and money per currency", async () => {
    const { container, backend } = await openContoso();
    expect(backend.partyQueries[0]).toEqual({ id: "cp_contoso", query: { from: "2026-01-01", to: "2026-12-31" } });
    const page = byId(container, "counterparty-page");
    expect(byId(page, "counterparty-name").textContent).toBe("Contoso GmbH");
    const identities = byId(page, "counterparty-identities");
    const rows = [...identities.querySelectorAll<HTMLElement>("[data-testid='counterparty-identity']")];
    expect(rows.map((r) => r.dataset.kind)).toEqual(["id", "key", "did"]);
    expect(texts(rows[1], "identity-changed")).toEqual(["changed mid-session"]);
    expect(texts(rows[0], "identity-changed")).toEqual([]);
    expect(cells(page, "counterparty-money-row")).toEqual([
      ["EUR", "1", "1", "12,000 EUR", "13,500 EUR", "1,500 EUR", "11.11%"],
      ["USD", "2", "1", "540,000 USD", "600,000 USD", "60,000 USD", "10.00%"],
    ]);
    expect(cells(page, "counterparty-session")).toEqual([
      ["ANP Sun 1 Mar, 08:00", "agreed", "600,000 USD", "540,000 USD", "60,000 USD", "10.00%"],
      ["Concordia Mon 4 May, 10:00", "agreed", "13,500 EUR", "12,000 EUR", "1,500 EUR", "11.11%"],
      ["ANP Fri 27 Nov, 08:00", "open", "585,000 USD", "—", "—", "—"],
    ]);
    const panels = [...byId(page, "counterparty-chart").querySelectorAll<HTMLElement>("[data-testid='counterparty-chart-currency']")];
    expect(panels.map((p) => p.dataset.currency)).toEqual(["EUR", "USD"]);
    expect(texts(page, "counterparty-waits-wait")).toEqual(["1 d 1 h", "10 min"]);
  });

  it("opens a figure's sessions among this counterparty's only", async () => {
    const backend = new FakeBackend();
    backend.figureRows = [
      { ...fx.sessionRows()[0], session_id: "s-contoso" },
      { ...fx.sessionRows()[0], session_id: "s-contoso-2", state: "agreed" },
    ];
    const { container, user } = await openContoso(backend);
    const states = byId(container, "counterparty-states");
    await user.click(states.querySelectorAll<HTMLElement>("[data-figure='state']")[1]);
    await settle();
    expect(backend.figureAsks.at(-1)!.figure).toEqual({ figure: "counterparty", id: "cp_contoso" });
    const list = byId(container, "desk-figure-sessions");
    expect(byId(list, "desk-figure-title").textContent).toBe("Sessions with Contoso GmbH: ANP/0.1, open");
    expect([...list.querySelectorAll<HTMLElement>("[data-testid='desk-figure-session']")].map((b) => b.dataset.session)).toEqual(["s-contoso"]);
    await user.click(byId(container, "counterparty-declines"));
    await settle();
    expect([...container.querySelectorAll<HTMLElement>("[data-testid='desk-figure-session']")].map((b) => b.dataset.session)).toEqual(["s-contoso"]);
    await user.click(byId(container, "counterparty-sessions-figure"));
    await settle();
    expect(texts(container, "desk-figure-session")).toHaveLength(2);
    // A session opened here goes back here.
    await user.click(container.querySelector<HTMLElement>("[data-testid='counterparty-session-open']")!);
    await settle();
    expect(backend.detailRefs.at(-1)).toEqual({ host_id: "h-sandbox", session_id: "s-contoso-2" });
    expect(byId(container, "back-button").textContent).toBe("← Counterparty");
    await user.click(byId(container, "back-button"));
    await settle();
    expect(byId(container, "counterparty-page").dataset.id).toBe("cp_contoso");
  });

  it("writes its sessions as CSV", async () => {
    const { container, backend, user } = await openContoso();
    await user.click(container.querySelector<HTMLElement>("[data-testid='desk-csv'][data-list='counterparty_sessions']")!);
    await settle();
    expect(backend.deskCsvs.at(-1)!.list).toEqual({ list: "counterparty_sessions", id: "cp_contoso" });
    expect(byId(container, "desk-csv-path").textContent).toContain("desk-counterparty-20261129120000.csv");
  });

  it("links one identity of each of two counterparties that may be the same, and unlinks them", async () => {
    const { container, backend, user } = await openContoso();
    const maybe = byId(container, "counterparty-maybe-row");
    expect(maybe.dataset.id).toBe("cp_contoso2");
    expect(byId(maybe, "counterparty-maybe-name").textContent).toBe("Contoso GmbH");
    await user.selectOptions(byId(maybe, "counterparty-link-ours"), "did:key:z6MkContoso");
    await user.selectOptions(byId(maybe, "counterparty-link-theirs"), "oanp merchant-7 at h-sandbox");
    await user.click(byId(maybe, "counterparty-link"));
    await settle();
    expect(backend.links).toEqual([{ a: "did:key:z6MkContoso", b: "oanp merchant-7 at h-sandbox" }]);
    // Now one counterparty: the other's identity is listed here, the link can be undone, nothing "may be the same" any more.
    const identities = byId(container, "counterparty-identities");
    expect(texts(identities, "counterparty-identity-value")).toContain("oanp merchant-7 at Sandbox");
    expect(container.querySelector("[data-testid='counterparty-maybe']")).toBeNull();
    expect(texts(container, "counterparty-link-row")[0]).toContain("did:key:z6MkContoso");
    await user.click(byId(container, "counterparty-unlink"));
    await settle();
    expect(backend.unlinks).toEqual([1]);
    expect(container.querySelector("[data-testid='counterparty-links']")).toBeNull();
  });

  it("follows the counterparty to its new id when the link joins it to the other", async () => {
    const backend = new FakeBackend();
    const other = dfx.contoso2Page();
    // The other's least identity is smaller: the joined counterparty takes its id.
    other.identities[0].identity = "ANP/0.0 agt_first at h-sandbox";
    backend.parties.set("cp_contoso2", other);
    const { container, user } = await openContoso(backend);
    await user.click(byId(container, "counterparty-link"));
    await settle();
    expect(byId(container, "counterparty-page").dataset.id).toBe("cp_contoso2");
    expect(container.querySelector("[data-testid='counterparty-error']")).toBeNull();
    expect(texts(container, "counterparty-identity-value")).toContain("key:ed25519:c0nt0s0");
  });

  it("shows the engine's sentence when a link is refused", async () => {
    const backend = new FakeBackend();
    const refusal = "\"ANP/0.1 agt_contoso at h-sandbox\" is no identity of any counterparty here.";
    backend.linkRefusal = refusal;
    const { container, user } = await openContoso(backend);
    await user.click(byId(container, "counterparty-link"));
    await settle();
    expect(byId(container, "counterparty-link-error").textContent).toBe(refusal);
    expect(byId(container, "counterparty-page").dataset.id).toBe("cp_contoso");
  });

  it("goes back to the desk with Escape and with its button", async () => {
    const { container, user } = await openContoso();
    await user.keyboard("{Escape}");
    await settle();
    expect(byId(container, "desk")).toBeTruthy();
  });
});

describe("the audit pack", () => {
  it("shows the engine's sentence when an amount comes without its currency", async () => {
    const { container, backend, user } = await openDesk();
    const form = byId(container, "audit-pack-form");
    await user.type(byId(form, "audit-pack-min"), "100,000");
    await user.click(byId(form, "audit-pack-submit"));
    await settle();
    expect(backend.auditPacks.at(-1)).toEqual({ from: "2026-01-01", to: "2026-12-31", min_total: "100000" });
    expect(byId(form, "audit-pack-error").textContent).toBe(
      "currency must be a three-letter code like USD when min_total is given (amounts are never compared across currencies).");
    expect(byId(form, "audit-pack-currency").getAttribute("aria-invalid")).toBe("true");
    expect(form.querySelector("[data-testid='audit-pack-result']")).toBeNull();
  });

  it("shows the engine's sentence for an amount that is not one, and for days in the wrong order", async () => {
    const { container, user } = await openDesk();
    const form = byId(container, "audit-pack-form");
    await user.type(byId(form, "audit-pack-min"), "lots");
    await user.type(byId(form, "audit-pack-currency"), "usd");
    await user.click(byId(form, "audit-pack-submit"));
    await settle();
    expect(byId(form, "audit-pack-error").textContent).toBe("min_total must be a decimal amount like 100000, not \"lots\".");
    expect(byId(form, "audit-pack-min").getAttribute("aria-invalid")).toBe("true");
    await user.clear(byId(form, "audit-pack-min"));
    await setDay(byId(form, "audit-pack-from"), "2026-12-01");
    await setDay(byId(form, "audit-pack-to"), "2026-11-01");
    await user.click(byId(form, "audit-pack-submit"));
    await settle();
    expect(byId(form, "audit-pack-error").textContent).toBe("from (2026-12-01) must not be after to (2026-11-01).");
  });

  it("writes the pack and says where, what is in it, and how to verify it", async () => {
    const { container, backend, user } = await openDesk();
    const form = byId(container, "audit-pack-form");
    await user.selectOptions(byId(form, "audit-pack-action"), "approve");
    await user.type(byId(form, "audit-pack-min"), "100000");
    await user.type(byId(form, "audit-pack-currency"), "usd");
    await user.selectOptions(byId(form, "audit-pack-protocol"), "ANP/0.1");
    await user.selectOptions(byId(form, "audit-pack-counterparty"), "cp_contoso");
    await user.click(byId(form, "audit-pack-submit"));
    await settle();
    expect(backend.auditPacks.at(-1)).toEqual({
      from: "2026-01-01", to: "2026-12-31", action: "approve", min_total: "100000", currency: "USD", protocol: "ANP/0.1", counterparty: "cp_contoso",
    });
    const result = byId(form, "audit-pack-result");
    expect(byId(result, "audit-pack-path").textContent).toBe("/data/countersign/exports/audit-pack-20261129120000");
    expect(byId(result, "audit-pack-sessions").textContent).toBe("3 sessions");
    expect(byId(result, "audit-pack-decisions").textContent).toBe("4 decisions");
    expect(byId(result, "audit-pack-verify").textContent).toBe("countersign-verify pack /data/countersign/exports/audit-pack-20261129120000");
    expect(form.querySelector("[data-testid='audit-pack-error']")).toBeNull();
  });
});
