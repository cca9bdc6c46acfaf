/**
 * The JSON shapes of docs/console-contract.md, exactly as the engine
 * serializes them. Money is always a decimal string so the UI never does
 * float arithmetic on prices.
 */

/** An exact decimal amount as a string ("570000", "1140.50"). */
export type Money = string;

/** How far the console trusts a session's log. */
export type Verification = "verified" | "unproven" | "disputed";

/** The first screen's facts: sandbox mode, unread count, hosts. */
export interface AppState {
  sandbox: boolean;
  unread: number;
  hosts: HostInfo[];
  data_dir: string;
  /** The configured approver, offered as defaults by the connect form. */
  approver: ApproverProfile;
  /** The machine's locale (BCP 47, "en-GB"): numbers and dates are written in it, as notifications are. */
  locale: string;
  /** The machine's time zone ("Europe/Berlin"), when it has a name. */
  time_zone: string | null;
}

/** Who this console enrolls and approves as; `email` is what approvals carry. */
export interface ApproverProfile {
  name: string;
  email: string;
}

/** What the connect form sends: the host, its one-time code, and who enrolls. */
export interface ConnectRequest {
  url: string;
  code: string;
  name: string;
  email: string;
}

/** A connected buyer host and how the poller last found it. */
export interface HostInfo {
  host_id: string;
  url: string;
  label: string;
  sandbox: boolean;
  reachable: boolean;
  last_error: string | null;
  last_poll_at: string | null;
  platform_fingerprint: string;
  approver_email: string;
  /** False for a sandbox this run no longer runs: history only, `reachable` is how it was last found. */
  polled: boolean;
}

/** The counterparty as the host vouches for it; names are counterparty text. */
export interface Vendor {
  agent_id: string;
  agent_name: string;
  vendor_name: string;
  fingerprint: string;
  status: "sandbox" | "verified" | "revoked";
}

/** A change between two amounts: new minus old, and the two-place percent. */
export interface Change {
  absolute: Money;
  percent: string | null;
}

/** Which rows of the inbox to fetch: the first `limit` (all when absent), extended down to `through`. */
export interface InboxQuery {
  limit?: number;
  through?: OfferRef;
}

/** The first rows of the inbox and the counts of all of it. */
export interface InboxPage {
  items: InboxItem[];
  total: number;
  unread: number;
}

/** One pending decision, as the inbox lists it. */
export interface InboxItem {
  host_id: string;
  session_id: string;
  seq: number;
  event_hash: string;
  kind: "offer" | "counter_offer";
  actor: "vendor_agent" | "buyer";
  is_draft: boolean;
  vendor: Vendor;
  currency: string;
  total: Money;
  previous_total: Money | null;
  change: Change | null;
  expires_at: string;
  verification: Verification;
  approvals_given: number;
  approvals_required: number;
  unread: boolean;
  held_reason: string | null;
}

/** One line of an ANP offer; every text field is counterparty text. */
export interface LineItem {
  sku?: string;
  description: string;
  quantity: number | string;
  unit: string;
  unit_price: number | string;
  currency: string;
  term_months?: number;
}

/** An ANP offer payload. */
export interface Offer {
  currency: string;
  term_months: number;
  expires_at: string;
  line_items: LineItem[];
  total_annual?: number | string;
  conditions?: string[];
  notes?: string;
}

/** An old → new pair of a scalar field; null when absent on that side. */
export interface Scalar {
  old: string | null;
  new: string | null;
}

/** One field of a changed line item, with the numeric change when numeric. */
export interface FieldChange {
  field: string;
  old: string | null;
  new: string | null;
  absolute: Money | null;
  percent: string | null;
}

/** How one line item moved between two offers. */
export interface LineItemDiff {
  status: "added" | "removed" | "changed" | "unchanged";
  moved: boolean;
  key: string;
  old_index: number | null;
  new_index: number | null;
  old: LineItem | null;
  new: LineItem | null;
  fields: FieldChange[];
}

/** An offer's total: the amount that counts, computed and stated, and whether they disagree. */
export interface Total {
  amount: Money;
  computed: Money;
  stated: Money | null;
  mismatch: boolean;
}

/** The change of the offer total. */
export interface TotalChange {
  old: Total;
  new: Total;
  absolute: Money;
  percent: string | null;
  currency_changed: boolean;
}

/** The structured diff of two offers (crates/anp/src/diff.rs). */
export interface OfferDiff {
  currency: Scalar | null;
  term_months: Scalar | null;
  expires_at: Scalar | null;
  notes: Scalar | null;
  conditions: { added: string[]; removed: string[]; unchanged: string[] };
  line_items: LineItemDiff[];
  total: TotalChange;
}

/** The session's verification state and why. */
export interface VerificationReport {
  state: Verification;
  detail: string | null;
  failing_seq: number | null;
  checks: string[];
}

/** Everything the offer screen shows. */
export interface OfferView {
  item: InboxItem;
  offer: Offer;
  previous: Offer | null;
  previous_ref: { seq: number; actor: string } | null;
  diff: OfferDiff | null;
  vendor_envelope: Record<string, unknown>;
  buyer_envelope: Record<string, unknown>;
  verification: VerificationReport;
  approvals: { approved_by: string; at: string }[];
  expired: boolean;
  /** True while it waits for a decision; false once decided (here or elsewhere) or withdrawn. */
  pending: boolean;
  /** What was decided, once something was. */
  decision: ProposalDecision | null;
}

/** What became of a proposal: this console's decision, or what the log shows. */
export interface ProposalDecision {
  /** Null when it left the pending set with no answer on the log. */
  action: "approve" | "decline" | "counter" | null;
  outcome: "pending" | "appended" | "awaiting_approvals" | "held" | "answered" | "withdrawn";
  decided_by: string | null;
  at: string | null;
  decision_id: string | null;
  appended: AppendedEvent | null;
  detail: string;
}

/** An event a decision appended to the session's log; `verified` once this console checked and stored it. */
export interface AppendedEvent {
  seq: number;
  kind: "accept" | "decline" | "counter_offer";
  event_hash: string;
  verified: boolean;
}

/** A person's decision on one offer. */
export interface DecideRequest {
  host_id: string;
  session_id: string;
  in_response_to: string;
  action: "approve" | "decline" | "counter";
  reason?: string;
  offer?: Offer;
}

/** What the host did with a decision. */
export interface DecisionResult {
  decision_id: string;
  outcome: "appended" | "awaiting_approvals" | "held";
  detail: string;
  /** The event it appended, when it appended one. */
  appended: AppendedEvent | null;
}

/** One validation problem of a counter-offer, located by its path. */
export interface CounterError {
  path: string;
  message: string;
}

/** The engine's check of a counter-offer draft, with what would be sent. */
export interface CounterCheck {
  ok: boolean;
  errors: CounterError[];
  diff: OfferDiff | null;
}

/** Session states the history can be filtered by. */
export type SessionState = "open" | "closed" | "accepted" | "disputed" | "pending";

/** The history filter; every member optional. */
export interface HistoryFilter {
  text?: string;
  vendor?: string;
  state?: SessionState;
  min_total?: Money;
  max_total?: Money;
}

/** One session in the history list. */
export interface SessionRow {
  host_id: string;
  session_id: string;
  vendor: Vendor;
  status: string;
  sandbox: boolean;
  verification: Verification;
  event_count: number;
  last_total: Money | null;
  currency: string | null;
  pending: number;
  updated_at: string;
}

/** One event of a session's log, summarized as plain text. */
export interface TimelineEvent {
  seq: number;
  actor: string;
  kind: string;
  at: string;
  summary: string;
  payload: Record<string, unknown>;
  signer: string | null;
  signature: "verified" | "unproven" | "failed";
}

/** One offer total of one side, by round. */
export interface SeriesPoint {
  round: number;
  seq: number;
  total: Money;
}

/** A decision this console made on a session. */
export interface DecisionRecord {
  decision_id: string;
  action: string;
  in_response_to: string;
  outcome: string;
  at: string;
}

/** Everything the session screen shows. */
export interface SessionDetail {
  row: SessionRow;
  timeline: TimelineEvent[];
  series: { vendor_agent: SeriesPoint[]; buyer: SeriesPoint[] };
  decisions: DecisionRecord[];
  verification: VerificationReport;
  /** When disputed: where, what, whether the host's answer was kept, the acknowledgement. */
  dispute: DisputeView | null;
}

/** A disputed session at a glance. */
export interface DisputeView {
  host_id: string;
  host_label: string;
  host_url: string;
  session_id: string;
  /** Counterparty text. */
  counterparty: string;
  detected_at: string | null;
  failing_seq: number;
  checks: string[];
  detail: string;
  request: string | null;
  host_answer_kept: boolean;
  acknowledged: { note: string; at: string; by: string } | null;
}

/** One setting as the engine declares it; the screen is generic over `kind`. */
export type Setting = SettingBase & (
  | { kind: "toggle" }
  | { kind: "number"; min: number; max: number; unit: string }
  | { kind: "text"; input: "text" | "email"; max_len: number }
);

interface SettingBase {
  id: string;
  group: string;
  label: string;
  help: string;
  value: unknown;
  default: unknown;
}

/** The settings screen: every setting, who this console approves as with the key, and the data dir. */
export interface SettingsView {
  settings: Setting[];
  approver: { name: string; email: string; key_fingerprint: string; public_key: string };
  data_dir: string;
}

/** Where an export was written. */
export interface ExportResult {
  path: string;
  bytes: number;
}

/** `engine://changed`: which view's data changed. */
export interface ChangedEvent {
  what: "inbox" | "sessions" | "hosts";
  host_id?: string;
  session_id?: string;
}

/** Names one offer: the argument of offer_view, mark_seen, and `engine://open-offer`. */
export interface OfferRef {
  host_id: string;
  session_id: string;
  event_hash: string;
}

/** Names one session. */
export interface SessionRef {
  host_id: string;
  session_id: string;
}

/** A failed command: `message` is a sentence a person can read. */
export interface CommandError {
  code: string;
  message: string;
}
