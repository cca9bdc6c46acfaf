/**
 * The one place the interface chooses per protocol: each proposal kind's
 * screen and approve summary, each counter form's editor, and each
 * protocol's name for people. Shared views (inbox, history, the proposal
 * frame, the decision panel) look things up here and know no protocol;
 * each protocol's views and models live in its own folder beside this file.
 * What a decision panel may offer is data the engine sends
 * (`ProposalView.capabilities`), not a choice made here.
 */
import type { Component } from "svelte";
import type {
  Backend, CounterForm, InboxItem, ProposalDiff, ProposalKind, ProposalView, ReceiptDetail, ReceiptKind,
} from "../backend";
import AnexAcceptSummary from "./anex/AnexAcceptSummary.svelte";
import AnexAskBody from "./anex/AnexAskBody.svelte";
import AnexCountered from "./anex/AnexCountered.svelte";
import AnexCounterEditor from "./anex/AnexCounterEditor.svelte";
import { anexNoun, anexSession } from "./anex/words";
import AnpAcceptSummary from "./anp/AnpAcceptSummary.svelte";
import AnpCountered from "./anp/AnpCountered.svelte";
import AnpOfferBody from "./anp/AnpOfferBody.svelte";
import AnpCounterEditor from "./anp/CounterEditor.svelte";
import { anpNoun, anpSession } from "./anp/words";
import ConcordiaAcceptSummary from "./concordia/ConcordiaAcceptSummary.svelte";
import ConcordiaCountered from "./concordia/ConcordiaCountered.svelte";
import ConcordiaCounterEditor from "./concordia/ConcordiaCounterEditor.svelte";
import ConcordiaOfferBody from "./concordia/ConcordiaOfferBody.svelte";
import { concordiaNoun, concordiaSession } from "./concordia/words";
import OanpAcceptSummary from "./oanp/OanpAcceptSummary.svelte";
import OanpCountered from "./oanp/OanpCountered.svelte";
import OanpCounterEditor from "./oanp/OanpCounterEditor.svelte";
import OanpOfferBody from "./oanp/OanpOfferBody.svelte";
import OanpReceiptBody from "./oanp/OanpReceiptBody.svelte";
import { oanpNoun, oanpSession } from "./oanp/words";
import PlainAcceptSummary from "./plain/PlainAcceptSummary.svelte";
import PlainCountered from "./plain/PlainCountered.svelte";
import PlainCounterEditor from "./plain/PlainCounterEditor.svelte";
import PlainTermsBody from "./plain/PlainTermsBody.svelte";
import { plainNoun, plainSession } from "./plain/words";

/** What a counter editor is given; it hands back the counter in its protocol's own form. */
export interface CounterEditorProps {
  backend: Backend;
  view: ProposalView;
  submitting: boolean;
  onSubmit: (counter: Record<string, unknown>, reason?: string) => void;
  onCancel: () => void;
}

/** What the interface draws for one kind of proposal. */
export interface KindUi {
  /** The kind's own part of the proposal screen (terms, diff, mandates…). */
  Body: Component<{ view: ProposalView }>;
  /** What the person is about to accept, in the approve confirmation. */
  AcceptSummary: Component<{ view: ProposalView; now: number }>;
  /** "offer", "counter-offer", "draft counter-offer". */
  noun: (item: Pick<InboxItem, "kind" | "is_draft">) => string;
  /** A decided counter's terms beside the proposal they answered (`ProposalDecision.countered`). */
  Countered: Component<{ diff: ProposalDiff; view: ProposalView }>;
  /** The heading's word before the counterparty ("Offer from …"; "Terms with …"); "from" when unset. */
  preposition?: string;
}

export const KINDS: Record<ProposalKind, KindUi> = {
  anp_offer: { Body: AnpOfferBody, AcceptSummary: AnpAcceptSummary, noun: anpNoun, Countered: AnpCountered },
  concordia_offer: {
    Body: ConcordiaOfferBody, AcceptSummary: ConcordiaAcceptSummary, noun: concordiaNoun, Countered: ConcordiaCountered,
  },
  oanp_offer: { Body: OanpOfferBody, AcceptSummary: OanpAcceptSummary, noun: oanpNoun, Countered: OanpCountered },
  anex_ask: { Body: AnexAskBody, AcceptSummary: AnexAcceptSummary, noun: anexNoun, Countered: AnexCountered },
  plain_terms: {
    Body: PlainTermsBody, AcceptSummary: PlainAcceptSummary, noun: plainNoun, Countered: PlainCountered, preposition: "with",
  },
};

export const COUNTER_EDITORS: Record<CounterForm, Component<CounterEditorProps>> = {
  anp_offer: AnpCounterEditor,
  concordia_terms: ConcordiaCounterEditor,
  oanp_terms: OanpCounterEditor,
  anex_terms: AnexCounterEditor,
  plain_terms: PlainCounterEditor,
};

/** What the interface draws for one kind of filed receipt (its protocol's part of the receipt screen). */
export interface ReceiptUi {
  /** The receipt's checks, signed terms and the arbiter's report. */
  Body: Component<{ detail: ReceiptDetail }>;
  /** The protocol whose receipts these are, as the engine names it in `import_receipt`. */
  protocol: string;
}

export const RECEIPT_KINDS: Record<ReceiptKind, ReceiptUi> = {
  oanp_receipt: { Body: OanpReceiptBody as Component<{ detail: ReceiptDetail }>, protocol: "oanp" },
};

/** The protocols whose receipts a person can import, for the import form: [wire name, label]. */
export function receiptProtocols(): [string, string][] {
  return Object.values(RECEIPT_KINDS).map((kind) => [kind.protocol, protocolLabel(kind.protocol)]);
}

const LABELS: Record<string, string> = {
  "ANP/0.1": "ANP",
  concordia: "Concordia",
  oanp: "OANP",
  anex: "ANEX",
  plain: "Plain terms",
};

/** A protocol's name for people ("ANP", "Concordia"); an unknown one as the host names it. */
export function protocolLabel(protocol: string): string {
  return LABELS[protocol] ?? protocol;
}

/** Every protocol the interface knows, for filters: [wire name, label]. */
export function knownProtocols(): [string, string][] {
  return Object.entries(LABELS);
}

/** How a protocol's session reads in history: what its entries are called,
 * the chart's title, and what its exports hold. */
export interface SessionWords {
  /** One entry of the record: "event", "message". */
  entry: string;
  /** "events", "messages". */
  entries: string;
  /** The title of the chart of each side's amounts. */
  seriesTitle: string;
  /** What the JSON and CSV exports hold and how the JSON is checked. */
  exportHint: string;
  /** True when the protocol's entries carry no signatures (OANP envelopes,
   * ANEX messages): the verification banner then never claims a signature
   * was checked. */
  unsigned?: boolean;
  /** The protocol's message kinds as words (`counter_offer` → "Counter-offer"). */
  kinds?: Record<string, string>;
}

const SESSION_WORDS: Record<string, SessionWords> = {
  "ANP/0.1": anpSession,
  concordia: concordiaSession,
  oanp: oanpSession,
  anex: anexSession,
  plain: plainSession,
};

/** The session words of `protocol`; neutral ones for a protocol the interface does not know. */
export function sessionWords(protocol: string): SessionWords {
  return SESSION_WORDS[protocol] ?? {
    entry: "entry",
    entries: "entries",
    seriesTitle: "Amounts offered, in the order they were made",
    exportHint: "JSON: the session's record as the host serves it and every decision as it was sent. CSV: one row per proposal.",
  };
}
