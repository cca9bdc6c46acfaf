/**
 * An in-memory Backend for tests: it answers from fixtures, records every
 * call, and can emit the engine's events. A fake of the boundary, not a mock
 * of any real part.
 */
import type {
  AppState, Backend, ConnectRequest, CounterCheck, DecideRequest, DecisionResult, DisputeView, EngineEvent, HistoryFilter,
  HostInfo, ImportReceipt, InboxItem, InboxPage, InboxQuery, ProposalOpening, ProposalRef, ProposalView, ReceiptExport, ReceiptList, ReceiptRemoval, ReceiptView,
  KeyMove, SessionDetail, SessionRef, SessionRow, SettingsView, GiveStandIn, StandInView, StandInsView,
  AuditPackQuery, AuditPackResult, CounterpartyPage, DeskFigure, DeskList, DeskOverview, DeskQuery, DeskSessions, ExportResult, LinkView,
} from "../src/lib/backend";
import { itemKey } from "../src/lib/model/inbox";
import * as dfx from "./deskFixtures";
import * as fx from "./fixtures";

type Answer<T> = T | Error | (() => T | Promise<T>);

async function answer<T>(value: Answer<T>): Promise<T> {
  if (value instanceof Error) throw { code: "refused", message: value.message };
  if (typeof value === "function") return (value as () => T | Promise<T>)();
  return structuredClone(value);
}

export class FakeBackend implements Backend {
  app: Answer<AppState> = fx.appState;
  items: Answer<InboxItem[]> = fx.inboxItems();
  views = new Map<string, Answer<ProposalView>>([["hash-contoso-5", fx.offerView()]]);
  decision: Answer<DecisionResult> = {
    decision_id: "d-42", outcome: "appended", detail: "accept appended at seq 6",
    appended: { seq: 6, kind: "accept", event_hash: "hash-accept-6", verified: true },
  };
  counterCheck: Answer<CounterCheck> = { ok: true, errors: [], diff: { proposal_kind: "anp_offer", ...fx.offerDiff() } };
  rows: Answer<SessionRow[]> = fx.sessionRows();
  detail: Answer<SessionDetail> = fx.sessionDetail();
  connect: Answer<HostInfo> = { ...fx.sandboxHost, host_id: "h-real", label: "Buyer Corp", sandbox: false };

  decided: DecideRequest[] = [];
  /** Every counter checked, in its protocol's own form. */
  validated: Record<string, any>[] = [];
  filters: HistoryFilter[] = [];
  seen: ProposalRef[] = [];
  dismissed: ProposalRef[] = [];
  /** The inbox's expired section, as the engine would send it. */
  expiredItems: InboxItem[] = [];
  connects: ConnectRequest[] = [];
  settingsNow: SettingsView = fx.settingsView();
  /** A refusal for the next setSetting, in the engine's words. */
  settingRefusal: string | null = null;
  settingWrites: { id: string; value: unknown }[] = [];
  disputeExports: SessionRef[] = [];
  acknowledgements: { ref: SessionRef; note: string }[] = [];
  exports: string[] = [];
  detailRefs: { host_id: string; session_id: string }[] = [];
  /** Filed receipts by id, and what the next import answers. */
  receiptViews = new Map<string, Answer<ReceiptView>>();
  importAnswer: Answer<ReceiptView> | null = null;
  imports: ImportReceipt[] = [];
  receiptExports: string[] = [];
  /** Removals, the latest first, as the engine keeps them. */
  removed: ReceiptRemoval[] = [];
  /** The sentences of settings that loosen proof, as the engine sends them with every receipt view. */
  relaxed: string[] = [];
  inboxCalls = 0;
  inboxQueries: InboxQuery[] = [];
  private changed: ((event: EngineEvent) => void)[] = [];
  /** Proposals (their `itemKey`) this approver approved that still wait on others: not counted as waiting. */
  approvedByMe = new Set<string>();
  private opens: ((opening: ProposalOpening) => void)[] = [];
  private sessionOpens: ((ref: SessionRef) => void)[] = [];

  appState() { return answer(this.app); }
  /** Pages `items` as the engine does: soonest expiry first, the first `limit`, extended through `through`. */
  async inbox(query: InboxQuery = {}): Promise<InboxPage> {
    this.inboxCalls++;
    this.inboxQueries.push(structuredClone(query));
    const all = sortByExpiry(await answer(this.items));
    // What expired undecided (and was not dismissed) is the engine's own section; a test sets it.
    const expired = sortByExpiry(this.expiredItems);
    const through = query.through ? all.findIndex((item) => itemKey(item) === itemKey(query.through!)) : -1;
    const count = Math.max(query.limit ?? all.length, through + 1);
    // Waiting on this person: what they have not approved themselves (the fake approves as "me@…").
    const waiting = all.filter((item) => !this.approvedByMe.has(itemKey(item))).length;
    return { items: all.slice(0, count), total: all.length, unread: all.filter((item) => item.unread).length, waiting, expired };
  }
  proposalView(ref: ProposalRef) {
    const view = this.views.get(ref.event_hash);
    return view ? answer(view) : Promise.reject({ code: "not_found", message: "That offer is no longer pending." });
  }
  /** The passphrase that unlocks the key; while `keyLocked`, decide refuses as the engine does. */
  keyPassphrase = "correct horse battery";
  keyLocked = false;
  unlocks: (string | null)[] = [];
  decide(request: DecideRequest) {
    if (this.keyLocked) {
      return Promise.reject({ code: "locked", message: "The approver key is locked. Unlock it to sign this decision; nothing was signed or sent." });
    }
    this.decided.push(structuredClone(request));
    return answer(this.decision);
  }
  async unlockKey(passphrase: string | null) {
    this.unlocks.push(passphrase);
    if (passphrase !== this.keyPassphrase) throw { code: "invalid_input", message: "That passphrase does not open the approver key." };
    this.keyLocked = false;
    this.settingsNow = { ...this.settingsNow, key: { ...this.settingsNow.key, unlocked: true } };
    return structuredClone(this.settingsNow.key);
  }
  async lockKey() {
    this.keyLocked = true;
    this.settingsNow = { ...this.settingsNow, key: { ...this.settingsNow.key, unlocked: false } };
    return structuredClone(this.settingsNow.key);
  }
  async setKeyPassphrase(passphrase: string) {
    this.keyPassphrase = passphrase;
    this.settingsNow = { ...this.settingsNow, key: { ...this.settingsNow.key, protection: "passphrase" as const } };
    return structuredClone(this.settingsNow.key);
  }
  extensions: { ref: ProposalRef; expiresAt: string; reason: string }[] = [];
  extendAnswer: Error | null = null;
  async extendDeadline(ref: ProposalRef, expiresAt: string, reason: string) {
    this.extensions.push({ ref: structuredClone(ref), expiresAt, reason });
    if (this.extendAnswer) throw { code: "invalid_request", message: this.extendAnswer.message };
  }
  keyMoves: (string | null)[] = [];
  keyMove: KeyMove | Error = { fingerprint: "7b1e22aa90c3d4f5e6", hosts: [], finished: true };
  async moveToNewKey(passphrase: string | null) {
    this.keyMoves.push(passphrase);
    const move = this.keyMove;
    if (move instanceof Error) throw { code: "invalid_input", message: move.message };
    if (move.finished) {
      const old = this.settingsNow.key.fingerprint;
      this.settingsNow = { ...this.settingsNow, key: { ...this.settingsNow.key, fingerprint: move.fingerprint, moving_from: null,
        keys: [...this.settingsNow.key.keys.map((k) => k.fingerprint === old ? { ...k, retired_at: "2026-12-07T10:00:00Z" } : k),
          { fingerprint: move.fingerprint, since: "2026-12-07T10:00:00Z", retired_at: null }] } };
    } else {
      this.settingsNow = { ...this.settingsNow, key: { ...this.settingsNow.key, moving_from: this.settingsNow.key.fingerprint,
        fingerprint: move.fingerprint } };
    }
    this.settingsNow = { ...this.settingsNow, approver: { ...this.settingsNow.approver, key_fingerprint: move.fingerprint } };
    return structuredClone(move);
  }
  validateCounter(_ref: ProposalRef, counter: Record<string, unknown>) { this.validated.push(structuredClone(counter)); return answer(this.counterCheck); }
  sessions(filter: HistoryFilter) { this.filters.push(structuredClone(filter)); return answer(this.rows); }
  sessionDetail(ref: { host_id: string; session_id: string }) { this.detailRefs.push(ref); return answer(this.detail); }
  async exportSession(_ref: { host_id: string; session_id: string }, format: "json" | "csv") {
    this.exports.push(format);
    return { path: `/data/countersign/exports/s-contoso.${format}`, bytes: 2048 };
  }
  connectHost(request: ConnectRequest) { this.connects.push(request); return answer(this.connect); }
  hosts() { return answer([fx.sandboxHost]); }
  async refresh() {}
  async markSeen(ref: ProposalRef) { this.seen.push(ref); }
  async dismiss(ref: ProposalRef) {
    this.dismissed.push(ref);
    this.expiredItems = this.expiredItems.filter((item) => itemKey(item) !== itemKey(ref));
  }
  async settings() { return structuredClone(this.settingsNow); }
  async setSetting(id: string, value: unknown) {
    this.settingWrites.push({ id, value });
    if (this.settingRefusal) {
      const message = this.settingRefusal;
      this.settingRefusal = null;
      throw { code: "invalid_input", message };
    }
    this.settingsNow = {
      ...this.settingsNow,
      settings: this.settingsNow.settings.map((s) => (s.id === id ? { ...s, value } : s)),
    };
    return structuredClone(this.settingsNow);
  }
  async exportDispute(ref: SessionRef) {
    this.disputeExports.push(ref);
    return { path: `/data/countersign/exports/dispute-${ref.session_id}`, bytes: 9000 };
  }
  async acknowledgeDispute(ref: SessionRef, note: string): Promise<DisputeView> {
    this.acknowledgements.push({ ref, note });
    return fx.disputeView({ acknowledged: { note, at: "2026-11-29T12:00:00Z", by: "ana@buyer.example" } });
  }
  async importReceipt(request: ImportReceipt) {
    this.imports.push(structuredClone(request));
    if (!this.importAnswer) throw { code: "invalid_input", message: "The receipt cannot be read. Nothing was filed." };
    const view = await answer(this.importAnswer);
    this.receiptViews.set(view.row.receipt_id, view);
    return view;
  }
  async receipts(): Promise<ReceiptList> {
    const list: ReceiptList = { receipts: [], removed: structuredClone(this.removed), relaxed: [...this.relaxed] };
    for (const view of this.receiptViews.values()) list.receipts.push((await answer(view)).row);
    return list;
  }
  async removeReceipt(receiptId: string): Promise<ReceiptRemoval> {
    const filed = this.receiptViews.get(receiptId);
    if (!filed) throw { code: "not_found", message: `No receipt ${receiptId} is known to this console.` };
    const view = await answer(filed);
    this.receiptViews.delete(receiptId);
    const removal: ReceiptRemoval = {
      receipt_id: receiptId, protocol: view.row.protocol, file_name: view.row.file_name, receipt_sha256: view.receipt_sha256,
      log_file_name: view.log_file_name, log_sha256: view.log_sha256, sandbox: view.row.sandbox, imported_at: view.row.imported_at,
      session_id: view.row.session_id, headline: view.row.headline, removed_at: "2026-11-29T12:30:00Z",
      removed_by_name: this.settingsNow.approver.name, removed_by_email: this.settingsNow.approver.email,
    };
    this.removed = [removal, ...this.removed];
    return structuredClone(removal);
  }
  async receiptView(receiptId: string) {
    const view = this.receiptViews.get(receiptId);
    if (!view) throw { code: "not_found", message: `No receipt ${receiptId} is known to this console.` };
    return { ...(await answer(view)), relaxed: [...this.relaxed] };
  }
  async exportReceipt(receiptId: string): Promise<ReceiptExport> {
    this.receiptExports.push(receiptId);
    return { receipt: { path: `/data/countersign/exports/${receiptId}.receipt.json`, bytes: 6012 }, log: null };
  }
  /** Every host's stand-ins as the engine lists them (its zone and today too); gives and revocations change it. */
  standInsNow: StandInsView = fx.standInsView();
  /** Every giveStandIn request, as sent. */
  standInGifts: GiveStandIn[] = [];
  /** Every revokeStandIn, as asked. */
  standInRevokes: { hostId: string; delegationId: string }[] = [];
  /** A refusal for the next giveStandIn, in the host's words (the engine wraps it as it does every host refusal). */
  standInRefusal: string | null = null;
  standInsCalls = 0;
  private delegationCount = 0;

  async standIns() {
    this.standInsCalls++;
    return structuredClone(this.standInsNow);
  }
  /** Checks as the engine, then the host, would (in their words), keeps the delegation, and says the inbox changed. */
  async giveStandIn(request: GiveStandIn): Promise<StandInView> {
    this.standInGifts.push(structuredClone(request));
    const invalid = (message: string) => ({ code: "invalid_input", message });
    const refused = (message: string) => ({ code: "host_refused", message: `The host refused: ${message} (invalid_request).` });
    const host = this.standInsNow.hosts.find((h) => h.host_id === request.host_id);
    if (!host) throw { code: "not_found", message: `No host ${request.host_id} is known to this console.` };
    // The engine's own checks.
    if (request.to.trim() === "") throw invalid("Choose who stands in for you.");
    if (request.roles.length === 0) throw invalid("Choose at least one of your roles to hand over.");
    const shaped = (day: string) => /^\d{4}-\d{2}-\d{2}$/.test(day);
    if (!shaped(request.from_date)) throw invalid(`From must be a day such as 2026-12-24; got ${JSON.stringify(request.from_date)}.`);
    if (!shaped(request.to_date)) throw invalid(`Until must be a day such as 2026-12-24; got ${JSON.stringify(request.to_date)}.`);
    if (request.to_date < request.from_date) {
      throw invalid(`Until (${request.to_date}) is before From (${request.from_date}): the last day comes on or after the first.`);
    }
    // The host's.
    if (this.standInRefusal) {
      const message = this.standInRefusal;
      this.standInRefusal = null;
      throw refused(message);
    }
    const colleague = host.colleagues.find((c) => c.email === request.to);
    if (!colleague) throw refused(`to: ${JSON.stringify(request.to)} is not an approver of your organization enrolled now; a stand-in must be one.`);
    const notHeld = request.roles.findIndex((role) => !host.my_roles.includes(role));
    if (notHeld >= 0) {
      throw refused(`roles[${notHeld}]: you do not hold ${JSON.stringify(request.roles[notHeld])}; you hold ${host.my_roles.join(", ")}.`);
    }
    const real = (day: string) => {
      const at = new Date(`${day}T00:00:00Z`);
      return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === day;
    };
    for (const [day, field] of [[request.from_date, "from_date"], [request.to_date, "to_date"]]) {
      if (!real(day)) throw refused(`${field} must be a day written YYYY-MM-DD, such as 2026-12-24; got ${JSON.stringify(day)}.`);
    }
    const { today, zone } = this.standInsNow;
    if (request.from_date < today) {
      throw refused(`from_date (${request.from_date}) is before today in ${zone} (${today}): a delegation starts today or later.`);
    }
    const made: StandInView = {
      delegation_id: `dlg-${++this.delegationCount}`, from: host.me, from_name: this.settingsNow.approver.name,
      to: colleague.email, to_name: colleague.name, roles: [...request.roles],
      from_date: request.from_date, to_date: request.to_date, zone,
      // The fake reads the days in UTC; the host reads them in the zone.
      starts_at: `${request.from_date}T00:00:00.000Z`,
      ends_at: new Date(Date.parse(`${request.to_date}T00:00:00Z`) + 86_400_000).toISOString(),
      state: request.from_date > today ? "scheduled" : "in_force", revoked_at: null, revoked_by: null,
    };
    host.given = [made, ...host.given];
    this.emitChanged({ what: "inbox", host_id: host.host_id });
    return structuredClone(made);
  }
  /** Ends a delegation given or received at once, as either side may; the same again answers the same. */
  async revokeStandIn(hostId: string, delegationId: string): Promise<StandInView> {
    this.standInRevokes.push({ hostId, delegationId });
    const host = this.standInsNow.hosts.find((h) => h.host_id === hostId);
    if (!host) throw { code: "not_found", message: `No host ${hostId} is known to this console.` };
    const found = [...host.given, ...host.received].find((d) => d.delegation_id === delegationId);
    if (!found) throw { code: "host_refused", message: "The host refused: no such delegation (not_found)." };
    if (found.state !== "revoked") {
      found.state = "revoked";
      found.revoked_at = "2026-12-10T09:00:00.000Z";
      found.revoked_by = host.me;
      this.emitChanged({ what: "inbox", host_id: hostId });
    }
    return structuredClone(found);
  }

  /** The desk as the engine answers it, whatever the range (a test replaces it). */
  deskNow: Answer<DeskOverview> = dfx.deskOverview();
  deskQueries: DeskQuery[] = [];
  /** Counterparty pages by id; links join two, as the engine's grouping does. */
  parties = new Map<string, CounterpartyPage>([["cp_contoso", dfx.contosoPage()], ["cp_contoso2", dfx.contoso2Page()]]);
  partyQueries: { id: string; query: DeskQuery }[] = [];
  /** The sessions behind any figure (a test replaces them), and every figure asked for. */
  figureRows: Answer<SessionRow[]> = fx.sessionRows();
  figureAsks: { query: DeskQuery; figure: DeskFigure }[] = [];
  links: { a: string; b: string }[] = [];
  unlinks: number[] = [];
  /** A refusal for the next link, in the engine's words. */
  linkRefusal: string | null = null;
  deskCsvs: { query: DeskQuery; list: DeskList }[] = [];
  auditPacks: AuditPackQuery[] = [];
  auditPack: AuditPackResult = { path: "/data/countersign/exports/audit-pack-20261129120000", sessions: 3, decisions: 4 };
  private linkCount = 0;

  async desk(query: DeskQuery): Promise<DeskOverview> {
    this.deskQueries.push(structuredClone(query));
    checkRange(query);
    return { ...(await answer(this.deskNow)), query: structuredClone(query) };
  }
  async counterparty(id: string, query: DeskQuery): Promise<CounterpartyPage> {
    this.partyQueries.push({ id, query: structuredClone(query) });
    checkRange(query);
    const page = this.parties.get(id);
    if (!page) throw { code: "not_found", message: `No counterparty ${id} is known to this console.` };
    return structuredClone(page);
  }
  async deskSessions(query: DeskQuery, figure: DeskFigure): Promise<DeskSessions> {
    this.figureAsks.push({ query: structuredClone(query), figure: structuredClone(figure) });
    checkRange(query);
    return { figure: structuredClone(figure), rows: await answer(this.figureRows) };
  }
  /** Checks as the engine does (two known identities of two counterparties), then joins the two pages under the least identity's id. */
  async linkIdentities(a: string, b: string): Promise<LinkView> {
    this.links.push({ a, b });
    if (this.linkRefusal) {
      const message = this.linkRefusal;
      this.linkRefusal = null;
      throw { code: "invalid_input", message };
    }
    const of = (identity: string) => {
      const found = [...this.parties.entries()].find(([, page]) => page.identities.some((i) => i.identity === identity));
      if (!found) throw { code: "invalid_input", message: `${JSON.stringify(identity)} is no identity of any counterparty here.` };
      return found;
    };
    const [ida, pa] = of(a);
    const [idb, pb] = of(b);
    if (ida === idb) {
      throw { code: "invalid_input", message: `${JSON.stringify(a)} and ${JSON.stringify(b)} are already one counterparty (${pa.row.name}).` };
    }
    const link: LinkView = { link_id: ++this.linkCount, a, b, linked_by: "ana@buyer.example", linked_at: "2026-11-29T12:00:00Z" };
    const identities = [...pa.identities, ...pb.identities].sort((x, y) => (x.identity < y.identity ? -1 : 1));
    const least = (page: CounterpartyPage) => page.identities.map((i) => i.identity).sort()[0];
    const [keep, gone] = least(pa) <= least(pb) ? [ida, idb] : [idb, ida];
    const kept = this.parties.get(keep)!;
    this.parties.set(keep, {
      ...kept, identities, links: [...pa.links, ...pb.links, link],
      row: { ...kept.row, maybe_same_as: kept.row.maybe_same_as.filter((id) => id !== gone) },
    });
    this.parties.delete(gone);
    return structuredClone(link);
  }
  async unlinkIdentities(linkId: number): Promise<void> {
    this.unlinks.push(linkId);
    const page = [...this.parties.values()].find((p) => p.links.some((l) => l.link_id === linkId));
    if (!page) throw { code: "not_found", message: `No link ${linkId} is known to this console.` };
    page.links = page.links.filter((l) => l.link_id !== linkId);
  }
  async exportDeskCsv(query: DeskQuery, list: DeskList): Promise<ExportResult> {
    this.deskCsvs.push({ query: structuredClone(query), list: structuredClone(list) });
    checkRange(query);
    const name = list.list === "counterparty_sessions" ? "counterparty" : list.list;
    return { path: `/data/countersign/exports/desk-${name}-20261129120000.csv`, bytes: 1234 };
  }
  /** Checks the query as the engine does, in its words, then answers `auditPack`. */
  async exportAuditPack(query: AuditPackQuery): Promise<AuditPackResult> {
    this.auditPacks.push(structuredClone(query));
    checkRange(query);
    const action = query.action?.trim();
    if (action && !["approve", "decline", "counter"].includes(action)) {
      throw invalidInput(`action must be approve, decline or counter, not ${JSON.stringify(action)}.`);
    }
    const min = query.min_total?.trim();
    if (min) {
      if (!/^[+-]?\d+(\.\d+)?$/.test(min)) throw invalidInput(`min_total must be a decimal amount like 100000, not ${JSON.stringify(min)}.`);
      if (!/^[A-Z]{3}$/.test(query.currency?.trim() ?? "")) {
        throw invalidInput("currency must be a three-letter code like USD when min_total is given (amounts are never compared across currencies).");
      }
    }
    return structuredClone(this.auditPack);
  }

  async onChanged(handler: (event: EngineEvent) => void) {
    this.changed.push(handler);
    return () => { this.changed = this.changed.filter((h) => h !== handler); };
  }
  async onOpenSession(handler: (ref: SessionRef) => void) {
    this.sessionOpens.push(handler);
    return () => { this.sessionOpens = this.sessionOpens.filter((h) => h !== handler); };
  }
  async onOpenProposal(handler: (opening: ProposalOpening) => void) {
    this.opens.push(handler);
    return () => { this.opens = this.opens.filter((h) => h !== handler); };
  }

  /** Emits `engine://changed` as the shell would. */
  emitChanged(event: EngineEvent) { this.changed.forEach((h) => h(event)); }
  /** Emits `engine://open-proposal` as a notification click (or its "Approve…", "Decline…") would. */
  emitOpenOffer(ref: ProposalRef, decide: ProposalOpening["decide"] = null) {
    this.opens.forEach((h) => h({ ...ref, decide }));
  }
  emitOpenSession(ref: SessionRef) { this.sessionOpens.forEach((h) => h(ref)); }
}

function invalidInput(message: string) {
  return { code: "invalid_input", message };
}

/** The engine's check of a range: days written YYYY-MM-DD, the first not after the last. */
function checkRange(query: { from?: string | null; to?: string | null }) {
  const day = (text: string | null | undefined, name: string) => {
    const t = text?.trim();
    if (!t) return null;
    const at = new Date(`${t}T00:00:00Z`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(t) || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== t) {
      throw invalidInput(`${name} must be a day like 2026-01-31, not ${JSON.stringify(t)}.`);
    }
    return t;
  };
  const from = day(query.from, "from");
  const to = day(query.to, "to");
  if (from && to && from > to) throw invalidInput(`from (${from}) must not be after to (${to}).`);
}

/** As the engine orders the inbox: what waits on you first, then what waits on others, each soonest expiry first. */
function sortByExpiry(items: readonly InboxItem[]): InboxItem[] {
  return [...items].sort((a, b) => {
    if (a.waits_on_you !== b.waits_on_you) return a.waits_on_you ? -1 : 1;
    const byTime = Date.parse(a.expires_at) - Date.parse(b.expires_at);
    if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
    const byName = (a.counterparty.organization ?? a.counterparty.name).localeCompare(b.counterparty.organization ?? b.counterparty.name);
    return byName !== 0 ? byName : a.seq - b.seq;
  });
}

