//! The console contract as TypeScript, generated from the Rust types the
//! engine serializes (ts-rs), so the interface's types cannot drift from
//! what the shell sends. `ui/src/lib/backend/contract.ts` is this text;
//! the engine's test `contract::the_generated_typescript_is_current` fails
//! when it is stale and rewrites it with `COUNTERSIGN_WRITE_CONTRACT=1`.

use ts_rs::{Config, TS};

use super::*;
use crate::error::CommandError;
use crate::settings::{ApproverCard, Setting, SettingChoice, SettingKind, SettingsView};

/// One declaration: its TypeScript name, its text, and the names it uses.
#[derive(Debug, Clone)]
pub struct Declaration {
    /// The type's name in TypeScript.
    pub name: String,
    /// `export type Name = …;` with its doc comment.
    pub text: String,
    /// The contract types it refers to.
    pub uses: Vec<String>,
}

fn declare<T: TS + 'static>(cfg: &Config) -> Declaration {
    let docs = T::docs()
        .map(|d| format!("{}\n", d.trim_end()))
        .unwrap_or_default();
    Declaration {
        name: T::ident(cfg),
        text: format!("{docs}export {}", T::decl(cfg)),
        uses: T::dependencies(cfg)
            .into_iter()
            .map(|d| d.ts_name)
            .collect(),
    }
}

macro_rules! declarations {
    ($cfg:expr; $($t:ty),* $(,)?) => {
        vec![$(declare::<$t>($cfg)),*]
    };
}

/// Every type of the contract, declared.
pub fn declarations() -> Vec<Declaration> {
    let cfg = &Config::new().with_large_int("number");
    let mut all = declarations![cfg;
        // neutral
        MoneyText, Amount, Verification, AppState, crate::config::ApproverProfile, HostInfo,
        Counterparty, ProposalKind, Side, InboxItem, ApprovalChain, ChainStep, ChainPart, InboxQuery, InboxPage,
        Change, Effect, Gap, PreviousRef,
        Scalar, VerificationView, ApprovalGiven, CounterForm, Capabilities, DecisionRecipient, ProposalView,
        ProposalDetail, ProposalDecision, AppendedEvent, DecideAction, DecideRequest,
        DecisionResult, FieldError, CounterCheck, ProposalDiff, StateFilter, HistoryFilter,
        SessionRow, SessionState, TermRow, AgreedTerms, TimelineEvent, SeriesPoint, Series, DecisionRow, DecisionChain, SessionDetail, DisputeView,
        AcknowledgementView, ExportFormat, ExportResult, HostUpdates, UpdateMode, ChangeScope, EngineEvent, ProposalRef, ProposalOpening,
        SessionRef, CommandError, Setting, SettingKind, SettingChoice, ApproverCard, SettingsView,
        crate::keystore::KeyStatus, crate::keystore::KeyProtection, crate::keystore::KeyUsed,
        crate::rotate::KeyMove, crate::rotate::HostMove,
        HostApproval, StandingIn, StoodIn, StandInView, ColleagueView, HostStandIns, StandInsView, GiveStandIn,
        // ANP offers
        AnpOfferView, AnpOffer, AnpLineItem, AnpOfferDiff, AnpConditionsDiff, LineStatus,
        AnpLineItemDiff, AnpFieldChange, AnpTotalChange, AnpTotal,
        // Concordia offers
        ConcordiaOfferView, ConcordiaMessage, PartyKey, GateRequest, OfferShape, ConcordiaOffer,
        Term, Attribute, Clause, Bundle, ChangeStatus, ConcordiaOfferDiff, TermChange,
        AmountChange, ClauseChange, BundleChange,
        // filed receipts
        ReceiptKind, ImportReceipt, ReceiptRow, ReceiptDetail, ReceiptView, HeldLog, ReceiptRef,
        ReceiptExport, ReceiptList, ReceiptRemoval,
        // OANP receipts
        OanpReceiptView, OanpSigner, OanpCheck, OanpMoney, OanpInclusion, OanpTerms, OanpSigned,
        OanpReport, OanpParty, OanpUtility, OanpRound, OanpInvariant, OanpProblem,
        OanpOfferView, OanpOffer, OanpEnvelopeRef, OanpVerdict, OanpTermsDiff,
        PlainTermsView, PlainTerms, PlainCounterparty, PlainLineItem, PlainAgent, PlainEntryRef,
        PlainTermsDiff, PlainLineDiff,
        // the desk
        DeskQuery, CurrencyFigures, WaitFigures, WaitRow, PersonFigures, MonthFigures,
        CounterpartyRow, DeskOverview, IdentityView, LinkView, SessionWin, StateCount,
        CounterpartyPage, DeskFigure, DeskList, DeskSessions, AuditPackQuery, AuditPackResult,
        // ANEX asks
        AnexAskView, AnexRequester, AnexItemView, AnexTerms, AnexAccessItem, AnexMarkChange,
        AnexTermsDiff,
    ];
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all
}

/// The whole contract as one TypeScript module.
pub fn typescript() -> String {
    let mut out = String::from(
        "// The console contract (docs/console-contract.md), generated from the engine's Rust\n\
         // types by ts-rs: do not edit. Regenerate with\n\
         //   COUNTERSIGN_WRITE_CONTRACT=1 cargo test -p countersign-engine --test all contract\n",
    );
    for d in declarations() {
        out.push('\n');
        out.push_str(&d.text);
        out.push('\n');
    }
    out
}
