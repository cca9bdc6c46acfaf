/**
 * The desk as the engine would send it: two currencies (never summed), a
 * few months, waits, people, three counterparties of which two declare the
 * same name under different identities.
 */
import type { CounterpartyPage, CounterpartyRow, DeskOverview, WaitRow } from "../src/lib/backend";

export const YEAR = { from: "2026-01-01", to: "2026-12-31" };

export function slowWait(overrides: Partial<WaitRow> = {}): WaitRow {
  return {
    session: { host_id: "h-sandbox", session_id: "s-contoso-2" }, protocol: "ANP/0.1", counterparty: "Contoso GmbH",
    offer_at: "2026-03-02T09:00:00Z", decided_at: "2026-03-03T10:01:01Z", seconds: 90061, respond_within_minutes: 240, due_at: null, past_response_time: true,
    person: "ana@buyer.example", role: "finance", action: "approve", ...overrides,
  };
}

export function contosoRow(overrides: Partial<CounterpartyRow> = {}): CounterpartyRow {
  return {
    id: "cp_contoso", name: "Contoso GmbH", protocols: ["ANP/0.1", "concordia"], sessions: 3,
    money: [
      { currency: "EUR", sessions: 1, agreed_sessions: 1, agreed_total: "12000", opening_total: "13500", won: "1500", won_percent: "11.11" },
      { currency: "USD", sessions: 2, agreed_sessions: 1, agreed_total: "540000", opening_total: "600000", won: "60000", won_percent: "10.00" },
    ],
    waits: { decisions: 2, median_seconds: 12000, p90_seconds: 90061, past_response_time: 1 },
    declines: 1, counters: 1, breaches: 1, disputes: 0, key_changes: 1, maybe_same_as: ["cp_contoso2"], ...overrides,
  };
}

export function deskOverview(): DeskOverview {
  return {
    query: { ...YEAR },
    sessions: 6,
    money: [
      { currency: "EUR", sessions: 1, agreed_sessions: 1, agreed_total: "12000", opening_total: "13500", won: "1500", won_percent: "11.11" },
      { currency: "USD", sessions: 5, agreed_sessions: 2, agreed_total: "665000.50", opening_total: "720000", won: "54999.50", won_percent: "7.64" },
    ],
    months: [
      { month: "2026-03", currency: "USD", agreed_total: "540000", won: "60000" },
      { month: "2026-05", currency: "EUR", agreed_total: "12000", won: "1500" },
      { month: "2026-06", currency: "USD", agreed_total: "125000.50", won: "-5000.50" },
    ],
    waits: { decisions: 4, median_seconds: 12000, p90_seconds: 90061, past_response_time: 1 },
    slowest: [
      slowWait(),
      slowWait({ session: { host_id: "h-sandbox", session_id: "s-fabrikam" }, counterparty: "Fabrikam Inc", seconds: 12000,
        offer_at: "2026-06-01T08:00:00Z", decided_at: "2026-06-01T11:20:00Z", respond_within_minutes: null, due_at: null, past_response_time: false, person: "grace@buyer.example",
        role: "buyer", action: "counter" }),
    ],
    people: [
      { person: "ana@buyer.example", role: "finance", approvals: 2, declines: 1, counters: 0 },
      { person: "grace@buyer.example", role: "buyer", approvals: 1, declines: 0, counters: 1 },
      { person: "ana@buyer.example", role: null, approvals: 0, declines: 0, counters: 1 },
    ],
    breaches: 1,
    disputes: 1,
    counterparties: [
      contosoRow(),
      {
        id: "cp_fabrikam", name: "Fabrikam Inc", protocols: ["ANP/0.1"], sessions: 2,
        money: [{ currency: "USD", sessions: 2, agreed_sessions: 1, agreed_total: "125000.50", opening_total: "120000", won: "-5000.50", won_percent: "-4.17" }],
        waits: { decisions: 1, median_seconds: 12000, p90_seconds: 12000, past_response_time: 0 },
        declines: 0, counters: 1, breaches: 0, disputes: 1, key_changes: 0, maybe_same_as: [],
      },
      {
        id: "cp_contoso2", name: "Contoso GmbH", protocols: ["oanp"], sessions: 1, money: [],
        waits: { decisions: 0, median_seconds: null, p90_seconds: null, past_response_time: 0 },
        declines: 0, counters: 0, breaches: 0, disputes: 0, key_changes: 0, maybe_same_as: ["cp_contoso"],
      },
    ],
  };
}

export function contosoPage(): CounterpartyPage {
  return {
    row: contosoRow(),
    identities: [
      { identity: "ANP/0.1 agt_contoso at h-sandbox", label: "ANP/0.1 agt_contoso at Sandbox", kind: "id", first_seen: "2026-03-01T08:00:00Z", last_seen: "2026-11-29T11:40:00Z",
        sessions: 2, changed_mid_session: false, replaces: null },
      { identity: "key:ed25519:c0nt0s0", label: "key:ed25519:c0nt0s0", kind: "key", first_seen: "2026-03-01T08:00:00Z", last_seen: "2026-11-29T11:40:00Z",
        sessions: 2, changed_mid_session: true, replaces: null },
      { identity: "did:key:z6MkContoso", label: "did:key:z6MkContoso", kind: "did", first_seen: "2026-05-04T10:00:00Z", last_seen: "2026-05-06T10:00:00Z",
        sessions: 1, changed_mid_session: false, replaces: null },
    ],
    links: [],
    by_state: [
      { protocol: "ANP/0.1", state: "agreed", count: 1 },
      { protocol: "ANP/0.1", state: "open", count: 1 },
      { protocol: "concordia", state: "agreed", count: 1 },
    ],
    sessions: [
      { session: { host_id: "h-sandbox", session_id: "s-contoso-2" }, protocol: "ANP/0.1", state: "agreed", opened_at: "2026-03-01T08:00:00Z",
        currency: "USD", opening: "600000", agreed: "540000", won: "60000", won_percent: "10.00" },
      { session: { host_id: "h-sandbox", session_id: "concordia:c-1" }, protocol: "concordia", state: "agreed", opened_at: "2026-05-04T10:00:00Z",
        currency: "EUR", opening: "13500", agreed: "12000", won: "1500", won_percent: "11.11" },
      { session: { host_id: "h-sandbox", session_id: "s-contoso" }, protocol: "ANP/0.1", state: "open", opened_at: "2026-11-27T08:00:00Z",
        currency: "USD", opening: "585000", agreed: null, won: null, won_percent: null },
    ],
    waits: [
      slowWait(),
      slowWait({ session: { host_id: "h-sandbox", session_id: "s-contoso" }, seconds: 600, past_response_time: false, offer_at: "2026-11-28T09:00:00Z",
        decided_at: "2026-11-28T09:10:00Z", action: "decline" }),
    ],
  };
}

export function contoso2Page(): CounterpartyPage {
  const row = deskOverview().counterparties[2];
  return {
    row,
    identities: [
      { identity: "oanp merchant-7 at h-sandbox", label: "oanp merchant-7 at Sandbox", kind: "id", first_seen: "2026-08-01T08:00:00Z", last_seen: "2026-08-02T08:00:00Z",
        sessions: 1, changed_mid_session: false, replaces: null },
    ],
    links: [],
    by_state: [{ protocol: "oanp", state: "closed", count: 1 }],
    sessions: [
      { session: { host_id: "h-sandbox", session_id: "oanp:m-7" }, protocol: "oanp", state: "closed", opened_at: "2026-08-01T08:00:00Z",
        currency: null, opening: null, agreed: null, won: null, won_percent: null },
    ],
    waits: [],
  };
}
