import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { Backend, Unsubscribe } from "./backend";
import { toCommandError } from "./backend";
import type { EngineEvent, ProposalOpening, SessionRef } from "./types";

/** Calls one shell command, turning any rejection into a readable CommandError. */
async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw toCommandError(error);
  }
}

/** Subscribes to one shell event and hands its payload on. */
async function subscribe<T>(event: string, handler: (payload: T) => void): Promise<Unsubscribe> {
  return listen<T>(event, (message) => handler(message.payload));
}

/**
 * The real Backend: the Tauri shell's commands and events, with argument
 * names exactly as docs/console-contract.md writes them (snake_case).
 */
export function createTauriBackend(): Backend {
  return {
    appState: () => call("app_state"),
    inbox: (query) => call("inbox", { query: query ?? {} }),
    proposalView: (ref) => call("proposal_view", { ...ref }),
    decide: (request) => call("decide", { request }),
    validateCounter: (ref, counter) => call("validate_counter", { ...ref, counter }),
    sessions: (filter) => call("sessions", { filter }),
    sessionDetail: (ref) => call("session_detail", { ...ref }),
    exportSession: (ref, format) => call("export_session", { ...ref, format }),
    desk: (query) => call("desk", { query }),
    counterparty: (id, query) => call("counterparty", { id, query }),
    deskSessions: (query, figure) => call("desk_sessions", { query, figure }),
    linkIdentities: (a, b) => call("link_identities", { a, b }),
    unlinkIdentities: (linkId) => call("unlink_identities", { link_id: linkId }),
    exportDeskCsv: (query, list) => call("export_desk_csv", { query, list }),
    exportAuditPack: (query) => call("export_audit_pack", { query }),
    connectHost: ({ url, code, name, email, allow_plain_http }) =>
      call("connect_host", { url, code, name, email, allow_plain_http }),
    hosts: () => call("hosts"),
    refresh: () => call("refresh"),
    markSeen: (ref) => call("mark_seen", { ...ref }),
    dismiss: (ref) => call("dismiss_proposal", { ...ref }),
    settings: () => call("settings"),
    setSetting: (id, value) => call("set_setting", { id, value }),
    unlockKey: (passphrase) => call("unlock_key", { passphrase }),
    lockKey: () => call("lock_key"),
    setKeyPassphrase: (passphrase) => call("set_key_passphrase", { passphrase }),
    moveToNewKey: (passphrase) => call("move_to_new_key", { passphrase }),
    extendDeadline: (ref, expiresAt, reason) => call("extend_deadline", { ...ref, expires_at: expiresAt, reason }),
    exportDispute: (ref) => call("export_dispute", { ...ref }),
    acknowledgeDispute: (ref, note) => call("acknowledge_dispute", { ...ref, note }),
    importReceipt: (request) => call("import_receipt", { request }),
    receipts: () => call("receipts"),
    removeReceipt: (receiptId) => call("remove_receipt", { receipt_id: receiptId }),
    receiptView: (receiptId) => call("receipt_view", { receipt_id: receiptId }),
    exportReceipt: (receiptId) => call("export_receipt", { receipt_id: receiptId }),
    standIns: () => call("stand_ins"),
    giveStandIn: (request) => call("give_stand_in", { request }),
    revokeStandIn: (hostId, delegationId) => call("revoke_stand_in", { host_id: hostId, delegation_id: delegationId }),
    onChanged: (handler) => subscribe<EngineEvent>("engine://changed", handler),
    onOpenProposal: (handler) => subscribe<ProposalOpening>("engine://open-proposal", handler),
    onOpenSession: (handler) => subscribe<SessionRef>("engine://open-session", handler),
  };
}
