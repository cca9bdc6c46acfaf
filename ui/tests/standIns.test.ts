/**
 * Stand-ins: per host, who stands in for the person and for whom they stand
 * in, in words; the form that lets a colleague stand in, which sends nothing
 * while it is wrong and shows each refusal (its own, the engine's, the
 * host's) beside the field it speaks of; taking back and giving up, each
 * confirmed first; a host that cannot be asked says why. Names and emails
 * are data, shown as text.
 */
import { describe, expect, it, vi } from "vitest";
import userEvent from "@testing-library/user-event";
import type { HostStandIns } from "../src/lib/backend";
import { createTauriBackend } from "../src/lib/backend/tauri";
import { checkGive, refusalField, stateWords } from "../src/lib/model/standIns";
import { day } from "../src/lib/model/format";
import { FakeBackend } from "./fakeBackend";
import * as fx from "./fixtures";
import { byId, renderApp, settle, texts } from "./helpers";

const invoke = vi.hoisted(() => vi.fn(async (..._args: unknown[]) => ({})));
vi.mock("@tauri-apps/api/core", () => ({ invoke }));

async function openStandIns(backend = new FakeBackend()) {
  const user = userEvent.setup();
  const rendered = await renderApp(backend);
  await user.click(byId(rendered.container, "nav-stand-ins"));
  await settle();
  return { ...rendered, user };
}

/** The lines of one list, without its buttons. */
function lines(container: HTMLElement, side: "given" | "received"): string[] {
  return [...container.querySelectorAll(`[data-testid='stand-in-${side}'] [data-testid='stand-in-line']`)]
    .map((el) => (el.textContent ?? "").replace(/\s+/g, " ").trim());
}

type Form = { to?: string; roles?: string[]; from?: string; until?: string };

/** Fills the form (a good one unless told otherwise) and presses "Let them stand in". */
async function give(container: HTMLElement, user: ReturnType<typeof userEvent.setup>, form: Form = {}) {
  const { to = "grace@buyer.example", roles = ["finance"], from = "2026-12-12", until = "2026-12-14" } = form;
  if (to) await user.selectOptions(byId<HTMLSelectElement>(container, "stand-in-to"), to);
  for (const role of roles) await user.click(byId(container, `stand-in-role-${role}`));
  const fromBox = byId<HTMLInputElement>(container, "stand-in-from");
  await user.clear(fromBox);
  if (from) await user.type(fromBox, from);
  const untilBox = byId<HTMLInputElement>(container, "stand-in-until");
  await user.clear(untilBox);
  if (until) await user.type(untilBox, until);
  await user.click(byId(container, "stand-in-give"));
  await settle();
}

describe("the Stand-ins screen", () => {
  it("is a section of its own, reached from the navigation, and Escape goes back to the inbox", async () => {
    const { container, backend, user } = await openStandIns();
    const nav = byId(container, "nav-stand-ins");
    expect(nav.tagName).toBe("BUTTON");
    expect(nav.textContent).toBe("Stand-ins");
    expect(nav.getAttribute("aria-current")).toBe("page");
    expect(byId(container, "stand-ins")).toBeTruthy();
    expect(backend.standInsCalls).toBe(1);
    await user.keyboard("{Escape}");
    await settle();
    expect(container.querySelector("[data-testid='stand-ins']")).toBeNull();
    expect(byId(container, "nav-inbox").getAttribute("aria-current")).toBe("page");
  });

  it("lists who stands in for me and whom I stand in for, with their days, zone and state in words", async () => {
    const { container } = await openStandIns();
    expect(lines(container, "given")).toEqual([
      "Grace (grace@buyer.example) as finance, Thu 10 Dec – Fri 11 Dec (Europe/Berlin) · in force",
      "Frank (frank@buyer.example) as buyer and finance, Tue 1 Dec – Wed 2 Dec (Europe/Berlin) · ended",
      "Grace (grace@buyer.example) as finance, Thu 3 Dec (Europe/Berlin) · revoked by you",
    ]);
    expect(lines(container, "received")).toEqual([
      "Fay (fay@buyer.example) as cfo, Mon 14 Dec – Fri 18 Dec (America/New_York) · scheduled",
    ]);
    // Only what is not over may be taken back or given up.
    const given = [...container.querySelectorAll<HTMLElement>("[data-testid='stand-in-given']")];
    expect(given.map((row) => row.querySelector("[data-testid='stand-in-revoke']") !== null)).toEqual([true, false, false]);
    expect(texts(container, "stand-in-revoke")).toEqual(["Take back…"]);
    expect(texts(container, "stand-in-give-up")).toEqual(["Give up…"]);
    // One host: no host heading.
    expect(container.querySelector("[data-testid='stand-in-host-label']")).toBeNull();
  });

  it("offers a colleague, the person's roles and two days typed as text, from today, in this computer's zone", async () => {
    const { container } = await openStandIns();
    const options = [...byId<HTMLSelectElement>(container, "stand-in-to").options].map((o) => [o.value, o.textContent]);
    expect(options).toEqual([["", "Choose a colleague…"], ["frank@buyer.example", "Frank (frank@buyer.example)"],
      ["grace@buyer.example", "Grace (grace@buyer.example)"]]);
    expect(byId<HTMLInputElement>(container, "stand-in-role-buyer").checked).toBe(false);
    expect(byId<HTMLInputElement>(container, "stand-in-role-finance").checked).toBe(false);
    for (const id of ["stand-in-from", "stand-in-until"]) {
      const box = byId<HTMLInputElement>(container, id);
      expect(box.type).toBe("text");
      expect(box.placeholder).toBe("YYYY-MM-DD");
      expect(box.value).toBe("2026-12-10");
    }
    expect(byId(container, "stand-in-zone").textContent).toBe("Days are in Europe/Berlin.");
    expect(byId(container, "stand-in-give").textContent?.trim()).toBe("Let them stand in");
  });

  it("says there is nothing to hand over to one who holds no role", async () => {
    const backend = new FakeBackend();
    backend.standInsNow.hosts[0].my_roles = [];
    const { container } = await openStandIns(backend);
    expect(container.querySelector("[data-testid='stand-in-form']")).toBeNull();
    expect(byId(container, "stand-in-no-roles").textContent).toBe(
      "You hold no role of this organization's policy of authority here, so there is nothing to hand over.");
    expect(lines(container, "given")).toHaveLength(3);
  });

  it("lets a colleague stand in: sends exactly the request, then lists it and says so", async () => {
    const { container, backend, user } = await openStandIns();
    // Ticked finance first: the roles go in the order the host lists them.
    await give(container, user, { roles: ["finance", "buyer"] });
    expect(backend.standInGifts).toEqual([{
      host_id: "h-sandbox", to: "grace@buyer.example", roles: ["buyer", "finance"], from_date: "2026-12-12", to_date: "2026-12-14",
    }]);
    expect(container.querySelector("[data-testid='stand-in-error']")).toBeNull();
    expect(byId(container, "stand-in-given-notice").textContent).toBe(
      "Grace (grace@buyer.example) may stand in for you as buyer and finance, Sat 12 Dec – Mon 14 Dec (Europe/Berlin).");
    expect(lines(container, "given")[0]).toBe(
      "Grace (grace@buyer.example) as buyer and finance, Sat 12 Dec – Mon 14 Dec (Europe/Berlin) · scheduled");
    // The form starts over.
    expect(byId<HTMLSelectElement>(container, "stand-in-to").value).toBe("");
    expect(byId<HTMLInputElement>(container, "stand-in-role-buyer").checked).toBe(false);
    expect(byId<HTMLInputElement>(container, "stand-in-from").value).toBe("2026-12-10");
  });

  it("lets a colleague stand in from today, one day, with Enter in a day", async () => {
    const { container, backend, user } = await openStandIns();
    await user.selectOptions(byId<HTMLSelectElement>(container, "stand-in-to"), "frank@buyer.example");
    await user.click(byId(container, "stand-in-role-buyer"));
    await user.type(byId(container, "stand-in-until"), "{Enter}");
    await settle();
    expect(backend.standInGifts).toEqual([{
      host_id: "h-sandbox", to: "frank@buyer.example", roles: ["buyer"], from_date: "2026-12-10", to_date: "2026-12-10",
    }]);
    expect(lines(container, "given")[0]).toBe("Frank (frank@buyer.example) as buyer, Thu 10 Dec (Europe/Berlin) · in force");
  });

  const refusals: [string, Form, string, string][] = [
    ["no colleague", { to: "" }, "to", "Choose who stands in for you."],
    ["no role", { roles: [] }, "roles", "Choose at least one of your roles to hand over."],
    ["a day not written YYYY-MM-DD", { from: "12/12/2026" }, "from",
      "From must be a day written YYYY-MM-DD, such as 2026-12-10; got \"12/12/2026\"."],
    ["an empty day", { until: "" }, "until", "Until must be a day written YYYY-MM-DD, such as 2026-12-10; got \"\"."],
    ["a day the calendar does not have", { until: "2027-02-30" }, "until",
      "Until (2027-02-30) is not a day of the calendar: February 2027 has 28 days."],
    ["a thirteenth month", { from: "2026-13-01" }, "from", "From (2026-13-01) is not a day of the calendar: months run from 01 to 12."],
    ["Until before From", { from: "2026-12-12", until: "2026-12-11" }, "until",
      "Until (2026-12-11) is before From (2026-12-12): the last day comes on or after the first."],
    ["From before today", { from: "2026-12-09", until: "2026-12-11" }, "from",
      "From (2026-12-09) is before today in Europe/Berlin (2026-12-10): a stand-in starts today or later."],
  ];

  it.each(refusals)(
    "refuses %s beside its field and sends nothing", async (_name, form, field, message) => {
      const { container, backend, user } = await openStandIns();
      await give(container, user, form);
      expect(backend.standInGifts).toEqual([]);
      const errors = [...container.querySelectorAll<HTMLElement>("[data-testid='stand-in-error']")];
      expect(errors).toHaveLength(1);
      expect(errors[0].dataset.field).toBe(field);
      expect(errors[0].textContent).toBe(message);
      if (field !== "roles") {
        const input = byId(container, { to: "stand-in-to", from: "stand-in-from", until: "stand-in-until" }[field]!);
        expect(input.getAttribute("aria-invalid")).toBe("true");
        expect(input.getAttribute("aria-describedby")).toBe(errors[0].id);
      }
      // Correcting the field clears the refusal.
      await user.click(byId(container, "stand-in-role-buyer"));
      expect(container.querySelector("[data-testid='stand-in-error']")).toBeNull();
    });

  it("refuses a span longer than a year (367 days), as the host would, and takes one of 366", async () => {
    const { container, backend, user } = await openStandIns();
    await give(container, user, { from: "2026-12-10", until: "2027-12-11" });
    expect(backend.standInGifts).toEqual([]);
    expect(byId(container, "stand-in-error").dataset.field).toBe("until");
    expect(byId(container, "stand-in-error").textContent).toBe("From 2026-12-10 to 2027-12-11 is 367 days; a stand-in covers at most 366.");
    await give(container, user, { roles: [], from: "2026-12-10", until: "2027-12-10" });
    expect(backend.standInGifts).toHaveLength(1);
  });

  it("shows the host's refusal as it is, beside the field it names", async () => {
    const backend = new FakeBackend();
    backend.standInRefusal = "roles[0]: you do not hold \"finance\"; you hold buyer.";
    const { container, user } = await openStandIns(backend);
    await give(container, user);
    expect(backend.standInGifts).toHaveLength(1);
    const error = byId(container, "stand-in-error");
    expect(error.textContent).toBe("The host refused: roles[0]: you do not hold \"finance\"; you hold buyer. (invalid_request).");
    expect(error.dataset.field).toBe("roles");
    expect(container.querySelector("[data-testid='stand-in-given-notice']")).toBeNull();
    // What was typed stays, to be corrected.
    expect(byId<HTMLSelectElement>(container, "stand-in-to").value).toBe("grace@buyer.example");
    expect(byId<HTMLInputElement>(container, "stand-in-role-finance").checked).toBe(true);
  });

  it("shows a refusal that names no field under the form, as text", async () => {
    const backend = new FakeBackend();
    backend.giveStandIn = async (request) => {
      backend.standInGifts.push(request);
      throw { code: "host_refused", message: "The host refused: at is more than 300 seconds from the host's time <b>now</b> (invalid_request)." };
    };
    const { container, user } = await openStandIns(backend);
    await give(container, user);
    const error = byId(container, "stand-in-error");
    expect(error.dataset.field).toBe("");
    expect(error.textContent).toContain("<b>now</b>");
    expect(error.querySelector("b")).toBeNull();
  });

  it("takes back a stand-in only once confirmed, then shows it revoked", async () => {
    const { container, backend, user } = await openStandIns();
    await user.click(byId(container, "stand-in-revoke"));
    expect(backend.standInRevokes).toEqual([]);
    expect(byId(container, "stand-in-revoke-text").textContent).toContain(
      "Take back Grace (grace@buyer.example)'s stand-in as finance, Thu 10 Dec – Fri 11 Dec (Europe/Berlin)?");
    // Focus is on keeping it; Keep it sends nothing.
    expect(document.activeElement).toBe(byId(container, "stand-in-revoke-no"));
    await user.click(byId(container, "stand-in-revoke-no"));
    expect(container.querySelector("[data-testid='stand-in-revoke-confirm']")).toBeNull();
    expect(backend.standInRevokes).toEqual([]);
    await user.click(byId(container, "stand-in-revoke"));
    await user.click(byId(container, "stand-in-revoke-yes"));
    await settle();
    expect(backend.standInRevokes).toEqual([{ hostId: "h-sandbox", delegationId: "dlg-grace-finance" }]);
    expect(lines(container, "given")[0]).toBe(
      "Grace (grace@buyer.example) as finance, Thu 10 Dec – Fri 11 Dec (Europe/Berlin) · revoked by you");
    expect(container.querySelector("[data-testid='stand-in-revoke']")).toBeNull();
    expect(byId(container, "stand-in-ended").textContent).toBe(
      "Taken back: Grace (grace@buyer.example) no longer stands in for you as finance.");
  });

  it("keeps a stand-in when Escape closes the confirmation, and stays on the screen", async () => {
    const { container, backend, user } = await openStandIns();
    await user.click(byId(container, "stand-in-revoke"));
    await user.keyboard("{Escape}");
    await settle();
    expect(container.querySelector("[data-testid='stand-in-revoke-confirm']")).toBeNull();
    expect(byId(container, "stand-ins")).toBeTruthy();
    expect(document.activeElement).toBe(byId(container, "stand-in-revoke"));
    expect(backend.standInRevokes).toEqual([]);
  });

  it("gives up standing in for someone once confirmed", async () => {
    const { container, backend, user } = await openStandIns();
    await user.click(byId(container, "stand-in-give-up"));
    expect(byId(container, "stand-in-revoke-text").textContent).toContain("Give up standing in for Fay (fay@buyer.example) as cfo");
    expect(backend.standInRevokes).toEqual([]);
    await user.click(byId(container, "stand-in-revoke-yes"));
    await settle();
    expect(backend.standInRevokes).toEqual([{ hostId: "h-sandbox", delegationId: "dlg-fay-cfo" }]);
    expect(lines(container, "received")[0]).toContain("· revoked by you");
    expect(container.querySelector("[data-testid='stand-in-give-up']")).toBeNull();
  });

  it("shows a refused revocation's sentence in the confirmation", async () => {
    const backend = new FakeBackend();
    backend.revokeStandIn = async () => { throw { code: "unreachable", message: "The host at https://authority.example cannot be reached: timed out." }; };
    const { container, user } = await openStandIns(backend);
    await user.click(byId(container, "stand-in-revoke"));
    await user.click(byId(container, "stand-in-revoke-yes"));
    await settle();
    expect(byId(container, "stand-in-revoke-error").textContent).toBe(
      "The host at https://authority.example cannot be reached: timed out.");
    expect(byId(container, "stand-in-revoke-confirm")).toBeTruthy();
  });

  it("names each host when there are several, and a host that cannot be asked shows only why", async () => {
    const backend = new FakeBackend();
    const broken: HostStandIns = {
      host_id: "h-other", host_label: "Fabrikam authority", me: "ana@fabrikam.example", given: [], received: [], my_roles: [],
      colleagues: [], error: "The host at https://authority.fabrikam.example cannot be reached: <img src=x onerror=alert(1)>.",
    };
    backend.standInsNow.hosts.push(broken);
    const { container } = await openStandIns(backend);
    expect(texts(container, "stand-in-host-label")).toEqual(["Sandbox", "Fabrikam authority"]);
    const other = container.querySelector<HTMLElement>("[data-testid='stand-in-host'][data-host='h-other']")!;
    expect(other.querySelector("[data-testid='stand-in-host-error']")?.textContent).toBe(broken.error);
    expect(other.querySelector("img")).toBeNull();
    expect(other.querySelector("[data-testid='stand-in-form']")).toBeNull();
    expect(other.querySelector("[data-testid='stand-in-no-roles']")).toBeNull();
    expect(other.querySelectorAll("section.panel")).toHaveLength(0);
    // The host that answered still shows its lists and form.
    expect(lines(container, "given")).toHaveLength(3);
    expect(container.querySelectorAll("[data-testid='stand-in-form']")).toHaveLength(1);
  });

  it("shows names, emails and roles as text, never as markup", async () => {
    const backend = new FakeBackend();
    const host = backend.standInsNow.hosts[0];
    host.colleagues = [{ email: "eve@buyer.example", name: "<img src=x onerror=alert(1)>" }];
    host.given = [fx.standIn({ to: "eve@buyer.example", to_name: "<script>alert(1)</script>", roles: ["<b>finance</b>"] })];
    host.my_roles = ["<i>buyer</i>"];
    const { container } = await openStandIns(backend);
    expect(lines(container, "given")[0]).toContain("<script>alert(1)</script> (eve@buyer.example) as <b>finance</b>");
    expect(container.querySelector("[data-testid='stand-ins'] img, [data-testid='stand-ins'] script, [data-testid='stand-ins'] b, [data-testid='stand-ins'] i")).toBeNull();
    expect(byId(container, "stand-in-role-<i>buyer</i>")).toBeTruthy();
  });

  it("reads the list again when the engine says something changed", async () => {
    const { container, backend } = await openStandIns();
    const before = backend.standInsCalls;
    backend.standInsNow.hosts[0].received = [];
    backend.emitChanged({ what: "inbox", host_id: "h-sandbox" });
    await settle();
    expect(backend.standInsCalls).toBe(before + 1);
    expect(lines(container, "received")).toEqual([]);
    expect(byId(container, "stand-in-received-none").textContent).toBe("You stand in for nobody here.");
  });

  it("says why the list cannot be read", async () => {
    const backend = new FakeBackend();
    backend.standIns = async () => { throw { code: "locked", message: "The approver key is locked." }; };
    const { container } = await openStandIns(backend);
    expect(byId(container, "load-error").textContent).toBe("The approver key is locked.");
  });
});

describe("the form's checks", () => {
  const good = { to: "grace@buyer.example", roles: ["finance"], from: "2026-12-10", until: "2026-12-11" };

  it("takes real days, today or later, in order, and trims what was typed", () => {
    expect(checkGive(good, "2026-12-10", "Europe/Berlin")).toBeNull();
    expect(checkGive({ ...good, from: " 2026-12-10 ", until: "2026-12-10\t" }, "2026-12-10", "UTC")).toBeNull();
    expect(checkGive({ ...good, from: "2028-02-29", until: "2028-02-29" }, "2026-12-10", "UTC")).toBeNull();
    expect(checkGive({ ...good, from: "2027-02-29", until: "2027-03-01" }, "2026-12-10", "UTC")?.field).toBe("from");
    expect(checkGive({ ...good, from: "2026-12-1", until: "2026-12-11" }, "2026-12-10", "UTC")?.field).toBe("from");
    expect(checkGive({ ...good, from: "2026-12-00", until: "2026-12-11" }, "2026-12-10", "UTC")?.field).toBe("from");
  });

  it("reads which field a refusal speaks of, in the engine's words or the host's", () => {
    expect(refusalField("Choose who stands in for you.")).toBe("to");
    expect(refusalField("The host refused: to: \"x@y\" is not an approver of your organization enrolled now; a stand-in must be one. (invalid_request).")).toBe("to");
    expect(refusalField("roles[0]: you do not hold \"cfo\"; you hold finance.")).toBe("roles");
    expect(refusalField("from_date (2026-12-06) is before today in Europe/Berlin (2026-12-07): a delegation starts today or later.")).toBe("from");
    expect(refusalField("The host refused: to_date (2026-12-01) is before from_date (2026-12-02): the last day comes on or after the first. (invalid_request).")).toBe("until");
    expect(refusalField("Until (2026-12-01) is before From (2026-12-02): the last day comes on or after the first.")).toBe("until");
    expect(refusalField("From must be a day such as 2026-12-24; got \"x\".")).toBe("from");
    expect(refusalField("The host at https://h cannot be reached: timed out.")).toBeNull();
    expect(refusalField("The host refused: signature is not your key's signature (bad_signature).")).toBeNull();
  });

  it("writes a day as a person does, with the year when it is not this year's", () => {
    expect(day("2026-12-10", "2026-12-01")).toBe("Thu 10 Dec");
    expect(day("2027-01-04", "2026-12-01")).toBe("Mon 4 Jan 2027");
    expect(day("2026-12-10", "2026-12-01", { locale: "en-US" })).toBe("Thu, Dec 10");
    expect(day("not a day")).toBe("not a day");
  });
});

describe("the Tauri boundary", () => {
  it("calls the shell's stand-in commands with their arguments in snake_case", async () => {
    const backend = createTauriBackend();
    await backend.standIns();
    const request = { host_id: "h-1", to: "grace@buyer.example", roles: ["finance"], from_date: "2026-12-10", to_date: "2026-12-11" };
    await backend.giveStandIn(request);
    await backend.revokeStandIn("h-1", "dlg-1");
    expect(invoke.mock.calls).toEqual([
      ["stand_ins", undefined],
      ["give_stand_in", { request }],
      ["revoke_stand_in", { host_id: "h-1", delegation_id: "dlg-1" }],
    ]);
  });

  it("turns a rejection into the CommandError the screen shows", async () => {
    invoke.mockRejectedValueOnce({ code: "host_refused", message: "The host refused: roles[0]: you do not hold \"cfo\"; you hold finance. (invalid_request)." });
    await expect(createTauriBackend().giveStandIn({ host_id: "h-1", to: "g@b", roles: ["cfo"], from_date: "2026-12-10", to_date: "2026-12-10" }))
      .rejects.toEqual({ code: "host_refused", message: "The host refused: roles[0]: you do not hold \"cfo\"; you hold finance. (invalid_request)." });
  });
});

describe("a revoked stand-in's words", () => {
  it("say who revoked it, and 'you' when it was the person", () => {
    const revoked = { ...fx.standInsView().hosts[0].given[0], state: "revoked", revoked_by: "Grace@Buyer.example" };
    expect(stateWords(revoked, "grace@buyer.example")).toBe("revoked by you");
    expect(stateWords(revoked, "ana@buyer.example")).toBe("revoked by Grace@Buyer.example");
    expect(stateWords({ ...revoked, revoked_by: null })).toBe("revoked");
  });
});
