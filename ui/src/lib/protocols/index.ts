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
import type { Backend, CounterForm, InboxItem, ProposalKind, ProposalView } from "../backend";
import AnexAcceptSummary from "./anex/AnexAcceptSummary.svelte";
import AnexAskBody from "./anex/AnexAskBody.svelte";
import AnexCounterEditor from "./anex/AnexCounterEditor.svelte";
import { anexNoun } from "./anex/words";
import AnpAcceptSummary from "./anp/AnpAcceptSummary.svelte";
import AnpOfferBody from "./anp/AnpOfferBody.svelte";
import AnpCounterEditor from "./anp/CounterEditor.svelte";
import { anpNoun } from "./anp/words";
import ConcordiaAcceptSummary from "./concordia/ConcordiaAcceptSummary.svelte";
import ConcordiaCounterEditor from "./concordia/ConcordiaCounterEditor.svelte";
import ConcordiaOfferBody from "./concordia/ConcordiaOfferBody.svelte";
import { concordiaNoun } from "./concordia/words";

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
}

export const KINDS: Record<ProposalKind, KindUi> = {
  anp_offer: { Body: AnpOfferBody, AcceptSummary: AnpAcceptSummary, noun: anpNoun },
  concordia_offer: { Body: ConcordiaOfferBody, AcceptSummary: ConcordiaAcceptSummary, noun: concordiaNoun },
  anex_ask: { Body: AnexAskBody, AcceptSummary: AnexAcceptSummary, noun: anexNoun },
};

export const COUNTER_EDITORS: Record<CounterForm, Component<CounterEditorProps>> = {
  anp_offer: AnpCounterEditor,
  concordia_terms: ConcordiaCounterEditor,
  anex_terms: AnexCounterEditor,
};

const LABELS: Record<string, string> = {
  "ANP/0.1": "ANP",
  concordia: "Concordia",
  anex: "ANEX",
};

/** A protocol's name for people ("ANP", "Concordia"); an unknown one as the host names it. */
export function protocolLabel(protocol: string): string {
  return LABELS[protocol] ?? protocol;
}

/** Every protocol the interface knows, for filters: [wire name, label]. */
export function knownProtocols(): [string, string][] {
  return Object.entries(LABELS);
}
