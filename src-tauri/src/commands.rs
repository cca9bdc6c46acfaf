//! The Tauri commands: one per engine method, named and shaped exactly as
//! `docs/console-contract.md` says (arguments are one snake_case object). No
//! logic lives here; a failure rejects with the engine's `CommandError`.

use countersign_engine::{
    AppState, ApproverProfile, AuditPackQuery, AuditPackResult, CommandError, CounterCheck,
    CounterpartyPage, DecideRequest, DecisionResult, DeskFigure, DeskList, DeskOverview, DeskQuery,
    DeskSessions, DisputeView, Engine, ExportFormat, ExportResult, HistoryFilter, HostInfo,
    ImportReceipt, InboxPage, InboxQuery, KeyMove, KeyStatus, LinkView, ProposalView,
    ReceiptExport, ReceiptList, ReceiptRemoval, ReceiptView, SessionDetail, SessionRow,
    SettingsView,
};
use serde_json::Value;
use tauri::State;

/// The engine, or why it could not open (every command then says why).
pub struct EngineSlot(Result<Engine, CommandError>);

impl EngineSlot {
    /// An opened engine.
    pub fn ready(engine: Engine) -> Self {
        EngineSlot(Ok(engine))
    }

    /// An engine that failed to open: the UI shows this message.
    pub fn failed(error: CommandError) -> Self {
        EngineSlot(Err(error))
    }

    /// The engine, or the error it failed to open with.
    pub fn get(&self) -> Result<&Engine, CommandError> {
        self.0.as_ref().map_err(Clone::clone)
    }
}

type Reply<T> = Result<T, CommandError>;

/// `app_state`: the first screen.
#[tauri::command(rename_all = "snake_case")]
pub async fn app_state(slot: State<'_, EngineSlot>) -> Reply<AppState> {
    Ok(slot.get()?.app_state().await?)
}

/// `inbox`: a page of pending decisions, soonest expiry first, and the
/// counts of all of them (the whole inbox when `query` is absent).
#[tauri::command(rename_all = "snake_case")]
pub async fn inbox(slot: State<'_, EngineSlot>, query: Option<InboxQuery>) -> Reply<InboxPage> {
    Ok(slot.get()?.inbox_page(&query.unwrap_or_default()).await?)
}

/// `proposal_view`: one proposal in its kind's view shape (an ANP offer with
/// its diff and mandates, a Concordia offer with its terms diff and the
/// counterparty's key), its verification and what a decision may be.
#[tauri::command(rename_all = "snake_case")]
pub async fn proposal_view(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
    event_hash: String,
) -> Reply<ProposalView> {
    Ok(slot
        .get()?
        .proposal_view(&host_id, &session_id, &event_hash)
        .await?)
}

/// `decide`: approve, decline or counter, signed by the approver's key.
#[tauri::command(rename_all = "snake_case")]
pub async fn decide(slot: State<'_, EngineSlot>, request: DecideRequest) -> Reply<DecisionResult> {
    Ok(slot.get()?.decide(request).await?)
}

/// `extend_deadline`: moves a gate request's deadline (the organization's
/// own) later, with a reason.
#[tauri::command(rename_all = "snake_case")]
pub async fn extend_deadline(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
    event_hash: String,
    expires_at: String,
    reason: String,
) -> Reply<()> {
    Ok(slot
        .get()?
        .extend_deadline(&host_id, &session_id, &event_hash, &expires_at, &reason)
        .await?)
}

/// `validate_counter`: checks an edited counter (in the protocol's own form)
/// as the protocol does.
#[tauri::command(rename_all = "snake_case")]
pub async fn validate_counter(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
    event_hash: String,
    counter: Value,
) -> Reply<CounterCheck> {
    Ok(slot
        .get()?
        .validate_counter(&host_id, &session_id, &event_hash, counter)
        .await?)
}

/// `sessions`: the history list, filtered.
#[tauri::command(rename_all = "snake_case")]
pub async fn sessions(
    slot: State<'_, EngineSlot>,
    filter: HistoryFilter,
) -> Reply<Vec<SessionRow>> {
    Ok(slot.get()?.sessions(filter).await?)
}

/// `session_detail`: a session's timeline, series, decisions, verification.
#[tauri::command(rename_all = "snake_case")]
pub async fn session_detail(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
) -> Reply<SessionDetail> {
    Ok(slot.get()?.session_detail(&host_id, &session_id).await?)
}

/// `export_session`: writes JSON or CSV into the data dir's `exports/`.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_session(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
    format: ExportFormat,
) -> Reply<ExportResult> {
    Ok(slot
        .get()?
        .export_session(&host_id, &session_id, format)
        .await?)
}

/// `desk`: the vendor manager's desk for a date range.
#[tauri::command(rename_all = "snake_case")]
pub async fn desk(slot: State<'_, EngineSlot>, query: DeskQuery) -> Reply<DeskOverview> {
    Ok(slot.get()?.desk(query).await?)
}

/// `counterparty`: one counterparty's page.
#[tauri::command(rename_all = "snake_case")]
pub async fn counterparty(
    slot: State<'_, EngineSlot>,
    id: String,
    query: DeskQuery,
) -> Reply<CounterpartyPage> {
    Ok(slot.get()?.counterparty(&id, query).await?)
}

/// `desk_sessions`: the sessions behind a figure of the desk.
#[tauri::command(rename_all = "snake_case")]
pub async fn desk_sessions(
    slot: State<'_, EngineSlot>,
    query: DeskQuery,
    figure: DeskFigure,
) -> Reply<DeskSessions> {
    Ok(slot.get()?.desk_sessions(query, figure).await?)
}

/// `link_identities`: the person links two counterparties' identities.
#[tauri::command(rename_all = "snake_case")]
pub async fn link_identities(slot: State<'_, EngineSlot>, a: String, b: String) -> Reply<LinkView> {
    Ok(slot.get()?.link_identities(&a, &b).await?)
}

/// `unlink_identities`: undoes a person's link.
#[tauri::command(rename_all = "snake_case")]
pub async fn unlink_identities(slot: State<'_, EngineSlot>, link_id: i64) -> Reply<()> {
    Ok(slot.get()?.unlink_identities(link_id).await?)
}

/// `export_desk_csv`: a desk list as CSV into the data dir's `exports/`.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_desk_csv(
    slot: State<'_, EngineSlot>,
    query: DeskQuery,
    list: DeskList,
) -> Reply<ExportResult> {
    Ok(slot.get()?.export_desk_csv(query, list).await?)
}

/// `export_audit_pack`: an audit pack folder into the data dir's `exports/`.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_audit_pack(
    slot: State<'_, EngineSlot>,
    query: AuditPackQuery,
) -> Reply<AuditPackResult> {
    Ok(slot.get()?.export_audit_pack(query).await?)
}

/// `connect_host`: enrolls with a real host by URL and one-time code, as
/// the name and email the person typed (the configured ones when absent);
/// `allow_plain_http` is the person's lab override for plain HTTP off this
/// machine (the engine refuses it otherwise).
#[tauri::command(rename_all = "snake_case")]
pub async fn connect_host(
    slot: State<'_, EngineSlot>,
    url: String,
    code: String,
    name: Option<String>,
    email: Option<String>,
    allow_plain_http: Option<bool>,
) -> Reply<HostInfo> {
    let engine = slot.get()?;
    let configured = engine.approver_profile();
    let profile = ApproverProfile {
        name: name.unwrap_or(configured.name),
        email: email.unwrap_or(configured.email),
    };
    Ok(engine
        .connect_host_with(&url, &code, &profile, allow_plain_http.unwrap_or(false))
        .await?)
}

/// `hosts`: every connected host.
#[tauri::command(rename_all = "snake_case")]
pub async fn hosts(slot: State<'_, EngineSlot>) -> Reply<Vec<HostInfo>> {
    Ok(slot.get()?.hosts().await?)
}

/// `refresh`: one poll cycle now.
#[tauri::command(rename_all = "snake_case")]
pub async fn refresh(slot: State<'_, EngineSlot>) -> Reply<()> {
    Ok(slot.get()?.refresh().await?)
}

/// `mark_seen`: the person opened this proposal (clears its unread mark).
#[tauri::command(rename_all = "snake_case")]
pub async fn mark_seen(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
    event_hash: String,
) -> Reply<()> {
    Ok(slot
        .get()?
        .mark_seen(&host_id, &session_id, &event_hash)
        .await?)
}

/// `dismiss_proposal`: puts away a proposal that expired undecided (nothing is sent).
#[tauri::command(rename_all = "snake_case")]
pub async fn dismiss_proposal(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
    event_hash: String,
) -> Reply<()> {
    Ok(slot
        .get()?
        .dismiss(&host_id, &session_id, &event_hash)
        .await?)
}

/// `settings`: every setting with its value, the approver and key, the data dir.
#[tauri::command(rename_all = "snake_case")]
pub async fn settings(slot: State<'_, EngineSlot>) -> Reply<SettingsView> {
    Ok(slot.get()?.settings_view().await?)
}

/// `set_setting`: validates and saves one setting; answers the settings as now in effect.
#[tauri::command(rename_all = "snake_case")]
pub async fn set_setting(
    slot: State<'_, EngineSlot>,
    id: String,
    value: Value,
) -> Reply<SettingsView> {
    Ok(slot.get()?.set_setting(&id, value).await?)
}

/// `unlock_key`: unlocks the approver key (the desktop's secret store is
/// asked again, or `passphrase` opens the sealed key).
#[tauri::command(rename_all = "snake_case")]
pub async fn unlock_key(
    slot: State<'_, EngineSlot>,
    passphrase: Option<String>,
) -> Reply<KeyStatus> {
    Ok(slot.get()?.unlock_key(passphrase).await?)
}

/// `lock_key`: locks the approver key now; the inbox keeps filling.
#[tauri::command(rename_all = "snake_case")]
pub async fn lock_key(slot: State<'_, EngineSlot>) -> Reply<KeyStatus> {
    Ok(slot.get()?.lock_key())
}

/// `set_key_passphrase`: seals the key with a passphrase the person chose
/// (where no secret store keeps it).
#[tauri::command(rename_all = "snake_case")]
pub async fn set_key_passphrase(
    slot: State<'_, EngineSlot>,
    passphrase: String,
) -> Reply<KeyStatus> {
    Ok(slot.get()?.set_key_passphrase(passphrase).await?)
}

/// `move_to_new_key`: moves the approver to a new key at every connected
/// host (or finishes a move begun); `passphrase` is a sealed key's.
#[tauri::command(rename_all = "snake_case")]
pub async fn move_to_new_key(
    slot: State<'_, EngineSlot>,
    passphrase: Option<String>,
) -> Reply<KeyMove> {
    Ok(slot.get()?.move_to_new_key(passphrase).await?)
}

/// `stand_ins`: every connected host's stand-ins for this person.
#[tauri::command(rename_all = "snake_case")]
pub async fn stand_ins(slot: State<'_, EngineSlot>) -> Reply<countersign_engine::StandInsView> {
    Ok(slot.get()?.stand_ins().await?)
}

/// `give_stand_in`: lets a colleague act for this person in some roles for
/// some days, signed with the approver key.
#[tauri::command(rename_all = "snake_case")]
pub async fn give_stand_in(
    slot: State<'_, EngineSlot>,
    request: countersign_engine::GiveStandIn,
) -> Reply<countersign_engine::StandInView> {
    Ok(slot.get()?.give_stand_in(request).await?)
}

/// `revoke_stand_in`: takes back a stand-in given, or gives up one received.
#[tauri::command(rename_all = "snake_case")]
pub async fn revoke_stand_in(
    slot: State<'_, EngineSlot>,
    host_id: String,
    delegation_id: String,
) -> Reply<countersign_engine::StandInView> {
    Ok(slot
        .get()?
        .revoke_stand_in(&host_id, &delegation_id)
        .await?)
}

/// `export_dispute`: writes a disputed session's evidence into the data dir's `exports/`.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_dispute(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
) -> Reply<ExportResult> {
    Ok(slot.get()?.export_dispute(&host_id, &session_id).await?)
}

/// `acknowledge_dispute`: records the person's note; the session stays disputed.
#[tauri::command(rename_all = "snake_case")]
pub async fn acknowledge_dispute(
    slot: State<'_, EngineSlot>,
    host_id: String,
    session_id: String,
    note: String,
) -> Reply<DisputeView> {
    Ok(slot
        .get()?
        .acknowledge_dispute(&host_id, &session_id, &note)
        .await?)
}

/// `import_receipt`: verifies and files a receipt (and its session log)
/// from the bytes the webview read from the files the person chose.
#[tauri::command(rename_all = "snake_case")]
pub async fn import_receipt(
    slot: State<'_, EngineSlot>,
    request: ImportReceipt,
) -> Reply<ReceiptView> {
    Ok(slot.get()?.import_receipt(request).await?)
}

/// `receipts`: every filed receipt, verified under the settings in effect,
/// and every removal.
#[tauri::command(rename_all = "snake_case")]
pub async fn receipts(slot: State<'_, EngineSlot>) -> Reply<ReceiptList> {
    Ok(slot.get()?.receipts().await?)
}

/// `remove_receipt`: deletes a filed receipt; the record of the removal stays.
#[tauri::command(rename_all = "snake_case")]
pub async fn remove_receipt(
    slot: State<'_, EngineSlot>,
    receipt_id: String,
) -> Reply<ReceiptRemoval> {
    Ok(slot.get()?.remove_receipt(&receipt_id).await?)
}

/// `receipt_view`: one filed receipt in full.
#[tauri::command(rename_all = "snake_case")]
pub async fn receipt_view(slot: State<'_, EngineSlot>, receipt_id: String) -> Reply<ReceiptView> {
    Ok(slot.get()?.receipt_view(&receipt_id).await?)
}

/// `export_receipt`: writes a filed receipt and its log, byte for byte, into `exports/`.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_receipt(
    slot: State<'_, EngineSlot>,
    receipt_id: String,
) -> Reply<ReceiptExport> {
    Ok(slot.get()?.export_receipt(&receipt_id).await?)
}
