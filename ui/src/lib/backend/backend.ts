import type {
  AppState, ConnectRequest, CommandError, CounterCheck, DecideRequest, DecisionResult, DisputeView,
  EngineEvent, ExportResult, HistoryFilter, HostInfo, ImportReceipt, InboxPage, InboxQuery, ProposalOpening, ProposalRef, ProposalView,
  ReceiptExport, ReceiptList, ReceiptRemoval, ReceiptView, SessionDetail, SessionRef, SessionRow, SettingsView, KeyStatus, KeyMove,
  GiveStandIn, StandInView, StandInsView,
  AuditPackQuery, AuditPackResult, CounterpartyPage, DeskFigure, DeskList, DeskOverview, DeskQuery, DeskSessions, LinkView,
} from "./types";

/** Stops a subscription. */
export type Unsubscribe = () => void;

/**
 * Everything the interface may ask of the console, one method per contract
 * command and one subscribe per event. Views receive a Backend, so tests give
 * them an in-memory one and only `tauri.ts` knows about Tauri.
 */
export interface Backend {
  appState(): Promise<AppState>;
  /** A page of pending decisions, soonest expiry first, and the counts of the whole inbox. */
  inbox(query?: InboxQuery): Promise<InboxPage>;
  /** One proposal in its kind's view shape, with its capabilities. */
  proposalView(ref: ProposalRef): Promise<ProposalView>;
  decide(request: DecideRequest): Promise<DecisionResult>;
  /** Checks a counter in the protocol's own form (an ANP offer, Concordia terms). */
  validateCounter(ref: ProposalRef, counter: Record<string, unknown>): Promise<CounterCheck>;
  sessions(filter: HistoryFilter): Promise<SessionRow[]>;
  sessionDetail(ref: SessionRef): Promise<SessionDetail>;
  exportSession(ref: SessionRef, format: "json" | "csv"): Promise<ExportResult>;
  /** The vendor manager's desk for a date range: money per currency (never summed across them), waits, people, counterparties. */
  desk(query: DeskQuery): Promise<DeskOverview>;
  /** One counterparty's page: its identities and links, sessions with what was won, money and waits. */
  counterparty(id: string, query: DeskQuery): Promise<CounterpartyPage>;
  /** The sessions behind a figure of the desk, as History lists them. */
  deskSessions(query: DeskQuery, figure: DeskFigure): Promise<DeskSessions>;
  /** Links two identities of two counterparties (they are one from then on); rejects with the engine's sentence when refused. */
  linkIdentities(a: string, b: string): Promise<LinkView>;
  /** Undoes a person's link (the record of it is kept). */
  unlinkIdentities(linkId: number): Promise<void>;
  /** Writes one of the desk's lists as CSV into the data dir's exports/. */
  exportDeskCsv(query: DeskQuery, list: DeskList): Promise<ExportResult>;
  /** Writes an audit pack folder of the decisions the query selects; `countersign-verify pack <folder>` checks it. */
  exportAuditPack(query: AuditPackQuery): Promise<AuditPackResult>;
  connectHost(request: ConnectRequest): Promise<HostInfo>;
  hosts(): Promise<HostInfo[]>;
  refresh(): Promise<void>;
  markSeen(ref: ProposalRef): Promise<void>;
  /** Puts away a proposal that expired undecided; nothing is sent. Rejects for one that has not expired. */
  dismiss(ref: ProposalRef): Promise<void>;
  /** Every setting with its value, the approver and key fingerprint, the data dir. */
  settings(): Promise<SettingsView>;
  /** Saves one setting; rejects with the engine's sentence when the value is not allowed. */
  setSetting(id: string, value: unknown): Promise<SettingsView>;
  /** Unlocks the approver key: the desktop's secret store is asked again, or the passphrase opens the sealed key. */
  unlockKey(passphrase: string | null): Promise<KeyStatus>;
  /** Locks the approver key now; the inbox keeps filling. */
  lockKey(): Promise<KeyStatus>;
  /** Seals the unlocked key with a passphrase (where no secret store keeps it). */
  setKeyPassphrase(passphrase: string): Promise<KeyStatus>;
  /** Moves the approver to a new key at every connected host, or finishes a move begun (a sealed key's passphrase seals the new one). */
  moveToNewKey(passphrase: string | null): Promise<KeyMove>;
  /** Moves a gate request's deadline (the organization's own) later, with a reason kept at the host. */
  extendDeadline(ref: ProposalRef, expiresAt: string, reason: string): Promise<void>;
  /** Writes a disputed session's evidence (both copies byte for byte) into the data dir's exports/. */
  exportDispute(ref: SessionRef): Promise<ExportResult>;
  /** Notes the person's acknowledgement; the session stays disputed. */
  acknowledgeDispute(ref: SessionRef, note: string): Promise<DisputeView>;
  /** Verifies and files a receipt from the bytes read from the files the person chose; rejects, filing nothing, when it is not one. */
  importReceipt(request: ImportReceipt): Promise<ReceiptView>;
  /** Every filed receipt, verified under the settings in effect; every removal; the settings that loosen proof. */
  receipts(): Promise<ReceiptList>;
  /** Deletes a filed receipt; the record of the removal (which file, what it said, who, when) stays. */
  removeReceipt(receiptId: string): Promise<ReceiptRemoval>;
  /** One filed receipt in full: checks, signer, signed terms, the arbiter's report. */
  receiptView(receiptId: string): Promise<ReceiptView>;
  /** Writes a filed receipt and its log, byte for byte, into the data dir's exports/. */
  exportReceipt(receiptId: string): Promise<ReceiptExport>;
  /** Every connected host's stand-ins: who stands in for the person, for whom they stand in, their roles and colleagues. */
  standIns(): Promise<StandInsView>;
  /** Lets a colleague stand in for the person in some roles for a span of days, signed; rejects with the host's sentence. */
  giveStandIn(request: GiveStandIn): Promise<StandInView>;
  /** Takes back a stand-in given, or gives up one received; it ends at once at the host. */
  revokeStandIn(hostId: string, delegationId: string): Promise<StandInView>;
  onChanged(handler: (event: EngineEvent) => void): Promise<Unsubscribe>;
  /** A notification was clicked (or its "Approve…", "Decline…"): open that proposal, at that form. */
  onOpenProposal(handler: (opening: ProposalOpening) => void): Promise<Unsubscribe>;
  /** A dispute notification was clicked: show that session's timeline. */
  onOpenSession(handler: (ref: SessionRef) => void): Promise<Unsubscribe>;
}

/**
 * Turns whatever a command rejected with into a CommandError, so every view
 * can show `message` to a person whatever went wrong underneath.
 */
export function toCommandError(error: unknown): CommandError {
  if (error && typeof error === "object") {
    const record = error as Record<string, unknown>;
    if (typeof record.message === "string" && record.message.length > 0) {
      return { code: typeof record.code === "string" ? record.code : "error", message: record.message };
    }
  }
  if (typeof error === "string" && error.length > 0) {
    return { code: "error", message: error };
  }
  return { code: "error", message: "The console did not answer. Try again; if it keeps failing, restart Countersign." };
}
