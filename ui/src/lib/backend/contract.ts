// The console contract (docs/console-contract.md), generated from the engine's Rust
// types by ts-rs: do not edit. Regenerate with
//   COUNTERSIGN_WRITE_CONTRACT=1 cargo test -p countersign-engine --test all contract

/**
 * A person's acknowledgement of a dispute: noted, and still disputed.
 */
export type AcknowledgementView = { 
/**
 * The note (the person's words).
 */
note: string, 
/**
 * When (RFC 3339).
 */
at: string, 
/**
 * Who (the email this console approves as on that host).
 */
by: string, };

/**
 * The terms a session agreed, whole, and where they were agreed.
 */
export type AgreedTerms = { 
/**
 * The proposal that was accepted (null when the acceptance restates
 * terms no stored proposal carries).
 */
proposal_seq: number | null, 
/**
 * The entry that accepted it.
 */
accept_seq: number, 
/**
 * When it was accepted (RFC 3339).
 */
accepted_at: string, 
/**
 * Which side accepted, when the protocol says.
 */
accepted_by: Side | null, 
/**
 * The accepted proposal's one-line summary.
 */
summary: string, 
/**
 * Every term, in the order the proposal carries them.
 */
terms: Array<TermRow>, };

/**
 * An exact amount of money with its currency.
 */
export type Amount = { 
/**
 * Exact decimal text.
 */
value: Money, 
/**
 * The currency code (`USD`).
 */
currency: string, };

/**
 * How an amount moved.
 */
export type AmountChange = { 
/**
 * Before.
 */
old: Amount, 
/**
 * After.
 */
new: Amount, 
/**
 * New minus old, exactly; null across currencies.
 */
absolute: Money | null, 
/**
 * Two-place percentage; null across currencies or from zero.
 */
percent: string | null, };

/**
 * An access item with its mark.
 */
export type AnexAccessItem = { 
/**
 * Its name.
 */
item: string, 
/**
 * Marked `(m)`.
 */
required: boolean, };

/**
 * An ANEX ask awaiting the owner, and what it is compared with.
 */
export type AnexAskView = { 
/**
 * The ANEX conversation.
 */
conversation_id: string, 
/**
 * The message decided on (the requester's CFP or PROPOSE).
 */
message_id: string, 
/**
 * Its performative (`CFP`, `PROPOSE`).
 */
performative: string, 
/**
 * Its hash (`sha256:` of its canonical JSON), what a decision answers.
 */
message_hash: string, 
/**
 * Who asks.
 */
requester: AnexRequester, 
/**
 * The organization's agent that answers (the record's `responder`):
 * whom a receipt over the terms binds the person to.
 */
responder: string, 
/**
 * The host this console enrolled with (its URL), shown beside the
 * responder: the console signs only for that host's own agents.
 */
host: string, 
/**
 * Why the console refuses to sign for this responder (it is not the
 * enrolled host's own agent), or null when it is that host's.
 */
responder_refused: string | null, 
/**
 * The purpose the requester declared (its own words).
 */
purpose: string, 
/**
 * Each asked item, in the order asked.
 */
items: Array<AnexItemView>, 
/**
 * The promises the requester offers.
 */
promises_offered: Array<string>, 
/**
 * The promises the policy's rules require for the items they cover.
 */
policy_promises: Array<string>, 
/**
 * Of those, the ones the requester did not offer.
 */
promises_missing: Array<string>, 
/**
 * The previous standing proposal, when this ask answers one.
 */
previous: AnexTerms | null, 
/**
 * Where that previous proposal is in the conversation.
 */
previous_ref: PreviousRef | null, 
/**
 * From the previous proposal to this ask, null when there is none.
 */
diff: AnexTermsDiff | null, 
/**
 * How long accepted terms stay in force, in days, when the host said.
 */
terms_valid_days: number | null, 
/**
 * True when the host's policy verdicts were available (the ask is
 * pending); false for an ask read back from the record alone.
 */
policy_known: boolean, };

/**
 * One asked access item and the policy's word on it.
 */
export type AnexItemView = { 
/**
 * The item's name, without a mark.
 */
item: string, 
/**
 * True when the requester marked it `(m)`.
 */
required: boolean, 
/**
 * Whether a counter may drop it (`anex::rules::counter_may_drop`: not
 * when the requester marked it required, ANEX §4.4); the counter
 * editor offers to untick only these.
 */
removable: boolean, 
/**
 * Whether the owner's policy covers it for this counterparty (null
 * when not known).
 */
within_policy: boolean | null, 
/**
 * The policy rule (1-based) that covers it.
 */
rule: number | null, 
/**
 * Promises that rule needs beyond those offered.
 */
adds: Array<string>, 
/**
 * The policy's reason, in words.
 */
reason: string | null, };

/**
 * An item in both whose `(m)` mark changed.
 */
export type AnexMarkChange = { 
/**
 * The item.
 */
item: string, 
/**
 * Whether it was required before.
 */
was_required: boolean, };

/**
 * The requester as its CFP declared itself.
 */
export type AnexRequester = { 
/**
 * Its agent identity (the one the host authenticated).
 */
identity: string, 
/**
 * The owner it says it speaks for.
 */
owner: string, 
/**
 * The relation it declares (its own claim: it never widens the policy).
 */
relation: string | null, };

/**
 * Terms as lists of names and promises (what a counter is written as:
 * `{access, promise}`, no marks).
 */
export type AnexTerms = { 
/**
 * Access items.
 */
access: Array<string>, 
/**
 * Promises.
 */
promise: Array<string>, };

/**
 * What changed from one set of terms to the next (`crates/anex`'s diff).
 */
export type AnexTermsDiff = { 
/**
 * Items in the new terms only.
 */
access_added: Array<AnexAccessItem>, 
/**
 * Items in the old terms only.
 */
access_removed: Array<AnexAccessItem>, 
/**
 * Items in both whose mark changed.
 */
required_changed: Array<AnexMarkChange>, 
/**
 * Promises in the new terms only.
 */
promises_added: Array<string>, 
/**
 * Promises in the old terms only.
 */
promises_removed: Array<string>, };

/**
 * Conditions compared as multisets.
 */
export type AnpConditionsDiff = { 
/**
 * In the new offer only.
 */
added: Array<string>, 
/**
 * In the old offer only.
 */
removed: Array<string>, 
/**
 * In both.
 */
unchanged: Array<string>, };

/**
 * One changed field of a matched line.
 */
export type AnpFieldChange = { 
/**
 * `sku`, `description`, `quantity`, `unit`, `unit_price`, `currency` or
 * `term_months` (a line's total is derived, never a changed field).
 */
field: string, 
/**
 * Before, as text.
 */
old: string | null, 
/**
 * After, as text.
 */
new: string | null, 
/**
 * `new − old` for numeric fields.
 */
absolute: Money | null, 
/**
 * Percent change for numeric fields.
 */
percent: string | null, 
/**
 * Better or worse for the buyer (`anp::diff::price_effect`: the unit
 * price); null for fields with no direction.
 */
effect: Effect | null, };

/**
 * One line of an ANP offer; every text member is counterparty text.
 */
export type AnpLineItem = { 
/**
 * The vendor's product code.
 */
sku?: string | null, 
/**
 * What is sold.
 */
description: string, 
/**
 * How many.
 */
quantity: number | string, 
/**
 * The unit (`seat/year`).
 */
unit: string, 
/**
 * Price per unit.
 */
unit_price: number | string, 
/**
 * ISO 4217 code.
 */
currency: string, 
/**
 * A line-specific term.
 */
term_months?: number, };

/**
 * One row of the line-item diff.
 */
export type AnpLineItemDiff = { 
/**
 * Added, removed, changed or unchanged.
 */
status: LineStatus, 
/**
 * True when the line changed place.
 */
moved: boolean, 
/**
 * The SKU, or the description when SKU is absent.
 */
key: string, 
/**
 * Position in the old offer.
 */
old_index: number | null, 
/**
 * Position in the new offer.
 */
new_index: number | null, 
/**
 * The old line.
 */
old: AnpLineItem | null, 
/**
 * The new line.
 */
new: AnpLineItem | null, 
/**
 * The changed fields; empty unless `status` is `changed`.
 */
fields: Array<AnpFieldChange>, };

/**
 * An ANP offer payload (SPEC §5.2), as the UI reads and edits it. Numbers
 * stay the JSON numbers the log carries (or the text a person typed).
 */
export type AnpOffer = { 
/**
 * ISO 4217 code.
 */
currency: string, 
/**
 * Contract term in months.
 */
term_months: number, 
/**
 * RFC 3339 expiry.
 */
expires_at: string, 
/**
 * The lines.
 */
line_items: Array<AnpLineItem>, 
/**
 * The total as stated, if it is.
 */
total_annual?: number | string, 
/**
 * Conditions (counterparty text).
 */
conditions?: Array<string> | null, 
/**
 * Notes (counterparty text).
 */
notes?: string | null, };

/**
 * The structured diff of two ANP offers (`anp::diff::OfferDiff`).
 */
export type AnpOfferDiff = { 
/**
 * Set when the currency changed.
 */
currency: Scalar | null, 
/**
 * Set when the term changed.
 */
term_months: Scalar | null, 
/**
 * Set when the expiry moved.
 */
expires_at: Scalar | null, 
/**
 * Set when the notes changed.
 */
notes: Scalar | null, 
/**
 * Conditions added, removed, kept.
 */
conditions: AnpConditionsDiff, 
/**
 * One row per line of either offer.
 */
line_items: Array<AnpLineItemDiff>, 
/**
 * The change of the total.
 */
total: AnpTotalChange, };

/**
 * An ANP offer and what it is compared with.
 */
export type AnpOfferView = { 
/**
 * The offer payload, byte for byte as the log carries it.
 */
offer: AnpOffer, 
/**
 * The offer it answers, if any.
 */
previous: AnpOffer | null, 
/**
 * Where that previous offer is.
 */
previous_ref: PreviousRef | null, 
/**
 * The structured diff, null when there is nothing to compare with.
 */
diff: AnpOfferDiff | null, 
/**
 * The vendor's mandate envelope (from `session_open`; counterparty text).
 */
vendor_envelope: Record<string, unknown>, 
/**
 * The buyer's mandate envelope (event 2).
 */
buyer_envelope: Record<string, unknown>, };

/**
 * An offer's total: the amount that counts, computed and stated, and
 * whether they disagree.
 */
export type AnpTotal = { 
/**
 * The stated total when present, else the computed sum.
 */
amount: Money, 
/**
 * Σ quantity × unit_price.
 */
computed: Money, 
/**
 * As the offer states it.
 */
stated: Money | null, 
/**
 * True when a stated total disagrees with the lines.
 */
mismatch: boolean, };

/**
 * The change of an offer's total.
 */
export type AnpTotalChange = { 
/**
 * The old total.
 */
old: AnpTotal, 
/**
 * The new total.
 */
new: AnpTotal, 
/**
 * `new.amount − old.amount`.
 */
absolute: Money, 
/**
 * Percent change; null from zero or across currencies.
 */
percent: string | null, 
/**
 * True when the currencies differ.
 */
currency_changed: boolean, 
/**
 * Better or worse for the buyer; null when it did not move or the
 * currency changed.
 */
effect: Effect | null, };

/**
 * Everything the first screen needs in one call.
 */
export type AppState = { 
/**
 * True when the only host is the embedded sandbox.
 */
sandbox: boolean, 
/**
 * Pending decisions not yet opened.
 */
unread: number, 
/**
 * Pending decisions waiting on this person (see [`InboxPage::waiting`]):
 * the count the tray and the window title show.
 */
waiting: number, 
/**
 * Every connected host.
 */
hosts: Array<HostInfo>, 
/**
 * Where all state lives (shown so a person can find exports).
 */
data_dir: string, 
/**
 * The configured name and email, offered as defaults when connecting
 * to a host (the host enrolls only the email its code was issued for).
 */
approver: ApproverProfile, 
/**
 * The machine's locale as a BCP 47 tag (`en-GB`): the interface writes
 * numbers and dates with it, as notifications do.
 */
locale: string, 
/**
 * The machine's time zone (`Europe/Berlin`), when it has a name.
 */
time_zone: string | null, 
/**
 * False while the approver key is kept nowhere (no desktop secret
 * store answered and no passphrase was chosen yet): nothing can be
 * enrolled, the sandbox included, until a passphrase keeps it.
 */
key_kept: boolean, 
/**
 * False while the key is sealed and not opened since the console
 * started: no host is asked for news and nothing is signed until the
 * person types the passphrase once.
 */
key_loaded: boolean, };

/**
 * An entry a decision appended to the session's record.
 */
export type AppendedEvent = { 
/**
 * Its seq.
 */
seq: number, 
/**
 * Its kind (`accept`, `decline`, `counter_offer`, …).
 */
kind: string, 
/**
 * Its hash.
 */
event_hash: string, 
/**
 * True once this console has verified it and stored it; false while it
 * is only the host's word.
 */
verified: boolean, };

/**
 * Where a decision stands on the chain of approvals its organization's
 * policy of authority gave it (the host's `route`, docs/authority.md): why
 * it went there, each step with who approved and who may still act, and
 * whether this person may act now.
 */
export type ApprovalChain = { 
/**
 * Why ("Above 10,000 USD: rule 2"); counterparty-free text of the
 * organization's own policy.
 */
reason: string, 
/**
 * The rule that fired, from 1; none for a fallback.
 */
rule: number | null, 
/**
 * The policy version it was routed under; none for the old threshold.
 */
policy_version: number | null, 
/**
 * The step waiting now, from 1; none once every step is met.
 */
current_step: number | null, 
/**
 * True when this person may approve now.
 */
you_may_approve: boolean, 
/**
 * True when this person may decline or counter now (holds an open
 * role of the current step).
 */
you_may_decide: boolean, 
/**
 * The role this person decides as at the current step; a Concordia or
 * OANP receipt of a chain routed by a policy names it (`approver.role`).
 */
your_role: string | null, 
/**
 * When this person decides as someone's stand-in: for whom, and the
 * delegation a Concordia, OANP or ANEX receipt names
 * (`approver.on_behalf_of`).
 */
your_stand_in: StandingIn | null, 
/**
 * Every step, in order.
 */
steps: Array<ChainStep>, };

/**
 * An approval already given, for multi-approver policies.
 */
export type ApprovalGiven = { 
/**
 * The approver's email.
 */
approved_by: string, 
/**
 * When.
 */
at: string, };

/**
 * The approver as hosts see it: who this console approves as, and the key.
 */
export type ApproverCard = { 
/**
 * Name (setting `approver.name`).
 */
name: string, 
/**
 * Email (setting `approver.email`).
 */
email: string, 
/**
 * Fingerprint of the approver key: what a host's admin compares.
 */
key_fingerprint: string, 
/**
 * The public key (base64url).
 */
public_key: string, };

/**
 * Who this console approves as: the name and email sent at enrollment,
 * the email is what signed approvals carry as `approved_by`.
 */
export type ApproverProfile = { 
/**
 * Display name.
 */
name: string, 
/**
 * Email (`approved_by`).
 */
email: string, };

/**
 * A named text value.
 */
export type Attribute = { 
/**
 * The name.
 */
name: string, 
/**
 * The value, as text.
 */
value: string, };

/**
 * Which decisions go into an audit pack.
 */
export type AuditPackQuery = { 
/**
 * Decisions made on or after this day (`YYYY-MM-DD`).
 */
from?: string | null, 
/**
 * Decisions made on or before this day.
 */
to?: string | null, 
/**
 * Only `approve`, `decline` or `counter`.
 */
action?: string | null, 
/**
 * Only offers of at least this amount (exact decimal)…
 */
min_total?: Money | null, 
/**
 * …in this currency (required with `min_total`).
 */
currency?: string | null, 
/**
 * Only this protocol.
 */
protocol?: string | null, 
/**
 * Only this counterparty (its id).
 */
counterparty?: string | null, };

/**
 * An audit pack written.
 */
export type AuditPackResult = { 
/**
 * The folder.
 */
path: string, 
/**
 * Sessions in it.
 */
sessions: number, 
/**
 * Decisions in it.
 */
decisions: number, };

/**
 * One alternative of a bundle offer.
 */
export type Bundle = { 
/**
 * Its id (how bundles are matched across offers).
 */
bundle_id: string, 
/**
 * Its label.
 */
label: string | null, 
/**
 * Its terms.
 */
terms: Array<Term>, };

/**
 * One bundle's change.
 */
export type BundleChange = { 
/**
 * The bundle id.
 */
bundle_id: string, 
/**
 * Added, removed or changed.
 */
status: ChangeStatus, 
/**
 * Old and new label, when they differ.
 */
label: Scalar | null, 
/**
 * Its terms' changes.
 */
terms: Array<TermChange>, 
/**
 * The bundle before.
 */
old: Bundle | null, 
/**
 * The bundle after.
 */
new: Bundle | null, };

/**
 * What a decision panel may offer for a proposal, as data: the interface
 * draws the buttons and forms these name and nothing else.
 */
export type Capabilities = { 
/**
 * The decisions a person may make now (once the proposal expired,
 * exactly `after_expiry`).
 */
actions: Array<DecideAction>, 
/**
 * The decisions the protocol still takes once the proposal expired
 * (ANP/0.1: a late decline still tells the vendor; a gate request
 * takes none): what the panel offers when it expires on screen.
 */
after_expiry: Array<DecideAction>, 
/**
 * A decline must carry a reason the counterparty reads.
 */
decline_needs_reason: boolean, 
/**
 * What a decline is called in this protocol ("Decline offer", "Refuse
 * the request"): the decline button's words.
 */
decline_label: string, 
/**
 * Reasons a person may pick for a decline, in this protocol's words
 * (a data request is refused for reasons about data, not price); the
 * person may always write their own.
 */
decline_reasons: Array<string>, 
/**
 * The editor a counter is written in, when a counter is offered.
 */
counter_form: CounterForm | null, 
/**
 * What the person's decision becomes, in words ("an RFC-002 approval in
 * an accept event", "an ApprovalReceipt signed with your key").
 */
signed_as: string, 
/**
 * Who receives the decision: the counterparty itself (ANP's log, ANEX's
 * answer), or the organization's own agent, which then acts on it
 * (Concordia, OANP): the words after a decision say which.
 */
decision_goes_to: DecisionRecipient, 
/**
 * The proposal's deadline is the organization's own (a gate request's,
 * which its agent asked for), so a person who may decide it may extend
 * it; otherwise it is the counterparty's (an ANP offer's expiry).
 */
deadline_is_ours: boolean, 
/**
 * Where the expiry is the counterparty's and a counter can move it:
 * the sentence saying so beside the decision (ANP's offers).
 */
expiry_note: string | null, };

/**
 * One role's share of a [`ChainStep`].
 */
export type ChainPart = { 
/**
 * The role.
 */
role: string, 
/**
 * How many of its holders must approve.
 */
required: number, 
/**
 * Who approved as it, in order (emails).
 */
approved_by: Array<string>, 
/**
 * Who may still approve it now (emails), stand-ins among them.
 */
may_act: Array<string>, 
/**
 * Those of `approved_by` who approved as someone's stand-in.
 */
stood_in: Array<StoodIn>, };

/**
 * One step of an [`ApprovalChain`].
 */
export type ChainStep = { 
/**
 * From 1.
 */
number: number, 
/**
 * True once every part is met.
 */
met: boolean, 
/**
 * One role, or several decided in parallel.
 */
parts: Array<ChainPart>, 
/**
 * How long it may wait, in minutes, when the policy says.
 */
respond_within_minutes: number | null, 
/**
 * Who it is offered to once that time has passed.
 */
escalate_to: string | null, 
/**
 * For the current step with a response time: when it is due (RFC
 * 3339), from the moment it opened.
 */
due_at: string | null, 
/**
 * True once the current step is past its time and offered to its
 * escalation role too.
 */
escalated: boolean, };

/**
 * A change between two amounts in one currency.
 */
export type Change = { 
/**
 * New minus old.
 */
absolute: Money, 
/**
 * Two-place percentage, or null when the old value is zero.
 */
percent: string | null, 
/**
 * Better or worse for the buyer, by the protocol crate's direction
 * rule; null when the change has no direction (or none moved).
 */
effect: Effect | null, };

/**
 * What changed, so the UI reloads only that.
 */
export type ChangeScope = "inbox" | "sessions" | "hosts" | "key";

/**
 * How a part of an offer changed.
 */
export type ChangeStatus = "added" | "removed" | "changed";

/**
 * One if/then clause of a conditional offer.
 */
export type Clause = { 
/**
 * The term values the clause applies to (`if`).
 */
when: Array<Attribute>, 
/**
 * The terms it then offers (`then`).
 */
then: Array<Term>, };

/**
 * One clause's change, by position.
 */
export type ClauseChange = { 
/**
 * Its position (0-based).
 */
index: number, 
/**
 * Added, removed or changed.
 */
status: ChangeStatus, 
/**
 * Whether the `if` part changed.
 */
when_changed: boolean, 
/**
 * The `then` terms' changes.
 */
then: Array<TermChange>, 
/**
 * The clause before.
 */
old: Clause | null, 
/**
 * The clause after.
 */
new: Clause | null, };

/**
 * A colleague who may stand in.
 */
export type ColleagueView = { 
/**
 * Their email.
 */
email: string, 
/**
 * Their name.
 */
name: string, };

/**
 * The `CommandError { code, message }` the shell rejects a command with.
 */
export type CommandError = { 
/**
 * Machine-readable code.
 */
code: string, 
/**
 * A sentence a person can read.
 */
message: string, };

/**
 * The message an offer came in.
 */
export type ConcordiaMessage = { 
/**
 * Its `id`.
 */
id: string, 
/**
 * Its type (`negotiate.offer`, `negotiate.counter`).
 */
message_type: string, 
/**
 * When it was sent, as it says.
 */
timestamp: string, 
/**
 * The sending party's id.
 */
from: string, 
/**
 * Its hash (what an ApprovalReceipt's `scope.offer_hash` names).
 */
hash: string, };

/**
 * A Concordia offer, laid out plainly.
 */
export type ConcordiaOffer = { 
/**
 * Which shape.
 */
shape: OfferShape, 
/**
 * Its `offer_id`, when given.
 */
offer_id: string | null, 
/**
 * Until when it stands, as sent.
 */
valid_until: string | null, 
/**
 * Whether it assigns every term, when it says.
 */
complete: boolean | null, 
/**
 * The terms (basic and partial offers), in id order.
 */
terms: Array<Term>, 
/**
 * The terms left open (partial offers).
 */
open_terms: Array<string>, 
/**
 * The if/then clauses (conditional offers), in order.
 */
conditions: Array<Clause>, 
/**
 * The alternatives (bundle offers), in order.
 */
bundles: Array<Bundle>, 
/**
 * How to choose among bundles (`one_of`), when it says.
 */
select: string | null, };

/**
 * The structured diff of two Concordia offers (`concordia::diff`).
 */
export type ConcordiaOfferDiff = { 
/**
 * Old and new shape, when the shape changed.
 */
shape: Scalar | null, 
/**
 * Term changes (basic and partial offers).
 */
terms: Array<TermChange>, 
/**
 * Terms newly left open.
 */
newly_open: Array<string>, 
/**
 * Terms no longer open.
 */
settled: Array<string>, 
/**
 * Clause changes, by position.
 */
conditions: Array<ClauseChange>, 
/**
 * Bundle changes, matched by `bundle_id`.
 */
bundles: Array<BundleChange>, 
/**
 * Old and new `valid_until`, when it changed.
 */
valid_until: Scalar | null, };

/**
 * A Concordia offer awaiting a person, and what it is compared with.
 */
export type ConcordiaOfferView = { 
/**
 * The offer the org's own agent asks about.
 */
offer: ConcordiaOffer, 
/**
 * The offer it answers (the latest earlier one of the other side), if any.
 */
previous: ConcordiaOffer | null, 
/**
 * Where that previous offer is.
 */
previous_ref: PreviousRef | null, 
/**
 * The structured diff, null when there is nothing to compare with.
 */
diff: ConcordiaOfferDiff | null, 
/**
 * The signed message that carries the offer.
 */
message: ConcordiaMessage, 
/**
 * The counterparty's free-text rationale (data: shown as text, never
 * followed).
 */
reasoning: string | null, 
/**
 * The key the message verified under, as this console pinned it.
 */
counterparty_key: PartyKey, 
/**
 * What the org's own agent asks to do, and for how much.
 */
request: GateRequest | null, };

/**
 * The verdict on an edited counter before it is sent.
 */
export type CounterCheck = { 
/**
 * True when it would pass the protocol's rules.
 */
ok: boolean, 
/**
 * Every problem found.
 */
errors: Array<FieldError>, 
/**
 * Its diff against the proposal it answers, when it parses.
 */
diff: ProposalDiff | null, };

/**
 * The counter editor a protocol's counter is written in.
 */
export type CounterForm = "anp_offer" | "concordia_terms" | "oanp_terms" | "anex_terms" | "plain_terms";

/**
 * Who is on the other side of a session, as the host vouches for it (an
 * ANP vendor agent; a Concordia party the org's own agent negotiates with).
 */
export type Counterparty = { 
/**
 * The counterparty's id (an ANP agent id, a Concordia party id).
 */
id: string, 
/**
 * Its declared name (counterparty text).
 */
name: string, 
/**
 * The organization it acts for, when declared (counterparty text).
 */
organization: string | null, 
/**
 * Fingerprint of its key: the identity people compare.
 */
fingerprint: string, 
/**
 * `sandbox`, `verified` or `revoked` (an ANP agent the host vetted), or
 * `declared` (named by the org's own agent; its key pinned here).
 */
status: string, 
/**
 * ANP: whether the host's admin verified `name` and `organization`;
 * false means they are only what a registration declared (shown as
 * "unverified" beside the name). Null where it does not apply, or
 * when the host does not say.
 */
verified: boolean | null, };

/**
 * A counterparty's page.
 */
export type CounterpartyPage = { 
/**
 * Its row.
 */
row: CounterpartyRow, 
/**
 * Every identity it is known by.
 */
identities: Array<IdentityView>, 
/**
 * The person's links among them.
 */
links: Array<LinkView>, 
/**
 * Sessions by protocol and state.
 */
by_state: Array<StateCount>, 
/**
 * Its sessions, oldest first, with what was won.
 */
sessions: Array<SessionWin>, 
/**
 * Its waits, slowest first.
 */
waits: Array<WaitRow>, };

/**
 * One counterparty in the desk's list.
 */
export type CounterpartyRow = { 
/**
 * Stable while its identities stay the same (`cp_` and hex).
 */
id: string, 
/**
 * The name a person knows it by (counterparty text).
 */
name: string, 
/**
 * The protocols it used.
 */
protocols: Array<string>, 
/**
 * Sessions in range.
 */
sessions: number, 
/**
 * Agreed money and wins, per currency.
 */
money: Array<CurrencyFigures>, 
/**
 * Waits for our decisions.
 */
waits: WaitFigures, 
/**
 * Our declines.
 */
declines: number, 
/**
 * Our counters.
 */
counters: number, 
/**
 * Its agents' breaches of a decision.
 */
breaches: number, 
/**
 * Sessions whose record is disputed.
 */
disputes: number, 
/**
 * Keys that took over from another key of the counterparty, between
 * sessions or within one.
 */
key_changes: number, 
/**
 * Other counterparties that may be the same organization (same
 * declared name, different identities, not linked): their ids.
 */
maybe_same_as: Array<string>, };

/**
 * Agreed money in one currency, and what was won against opening asks.
 */
export type CurrencyFigures = { 
/**
 * The currency code.
 */
currency: string, 
/**
 * Sessions with an amount in this currency.
 */
sessions: number, 
/**
 * Sessions agreed in it.
 */
agreed_sessions: number, 
/**
 * The agreed totals, summed (this currency only).
 */
agreed_total: Money, 
/**
 * The counterparties' opening asks of those agreed sessions, summed.
 */
opening_total: Money, 
/**
 * Opening minus agreed: what the organization, as the buyer, won.
 */
won: Money, 
/**
 * `won` as a percentage of `opening_total`, two places; none from zero.
 */
won_percent: string | null, };

/**
 * What a person decided.
 */
export type DecideAction = "approve" | "decline" | "counter";

/**
 * A decision, as the UI sends it.
 */
export type DecideRequest = { 
/**
 * Which host.
 */
host_id: string, 
/**
 * Which session.
 */
session_id: string, 
/**
 * The proposal's `event_hash`.
 */
in_response_to: string, 
/**
 * What to do.
 */
action: DecideAction, 
/**
 * Required for decline and counter (the counterparty reads it).
 */
reason?: string | null, 
/**
 * Required for counter: the counter in the protocol's own form (ANP:
 * the offer payload; Concordia: the `terms` object of an offer body).
 */
counter?: Record<string, unknown>, };

/**
 * The chain of approvals a decision made here was part of: why the
 * request was routed, under which rule and policy version, the step and
 * role this decision was made at and as, and each step as it stood then
 * (who had approved, as which role).
 */
export type DecisionChain = { 
/**
 * Why ("Above 10,000 USD: rule 2").
 */
reason: string, 
/**
 * The rule that fired, from 1; none for a fallback.
 */
rule: number | null, 
/**
 * The policy version it was routed under; none for the old threshold.
 */
policy_version: number | null, 
/**
 * The step this decision was made at.
 */
step: number | null, 
/**
 * The role it was made as.
 */
role: string | null, 
/**
 * When it was made as a stand-in: for whom (an email), and under which
 * delegation.
 */
stand_in: StandingIn | null, 
/**
 * Every step as it stood when the decision was made.
 */
steps: Array<ChainStep>, };

/**
 * Who a decision is sent to.
 */
export type DecisionRecipient = "counterparty" | "own_agent";

/**
 * What the host did with a decision.
 */
export type DecisionResult = { 
/**
 * The idempotency key; the same one on every retry.
 */
decision_id: string, 
/**
 * `appended`, `awaiting_approvals` or `held`.
 */
outcome: "appended" | "awaiting_approvals" | "held", 
/**
 * The host's words.
 */
detail: string, 
/**
 * The entry the decision appended, when it appended one.
 */
appended: AppendedEvent | null, };

/**
 * A decision this console made, as listed in the session detail.
 */
export type DecisionRow = { 
/**
 * Idempotency key.
 */
decision_id: string, 
/**
 * `approve`, `decline`, `counter`.
 */
action: string, 
/**
 * The proposal answered.
 */
in_response_to: string, 
/**
 * `pending` (not yet confirmed), `appended`, `awaiting_approvals`,
 * `held`, or `refused`.
 */
outcome: string, 
/**
 * When it was made.
 */
at: string, 
/**
 * The signed ApprovalReceipt the decision carried (Concordia, ANEX:
 * for ANEX its `scope.terms` is the terms record decided), exactly as
 * sent; null for a protocol whose decisions carry none.
 */
receipt: Record<string, unknown> | null, 
/**
 * The fingerprint of the approver key that signed it (a console that
 * moved to a new key shows which signed each decision).
 */
signed_with: string | null, 
/**
 * The chain of approvals it was made on, where the host routed the
 * request along one (as the host said when it was made).
 */
chain: DecisionChain | null, };

/**
 * A figure on the desk whose sessions a person opens.
 */
export type DeskFigure = { "figure": "all" } | { "figure": "currency", 
/**
 * The currency.
 */
currency: string, } | { "figure": "agreed", 
/**
 * The currency.
 */
currency: string, } | { "figure": "past_response_time" } | { "figure": "person", 
/**
 * An email.
 */
person: string, 
/**
 * The role.
 */
role: string | null, } | { "figure": "breaches" } | { "figure": "disputes" } | { "figure": "counterparty", 
/**
 * Its id.
 */
id: string, };

/**
 * A list on the desk, as CSV.
 */
export type DeskList = { "list": "counterparties" } | { "list": "sessions", 
/**
 * Which.
 */
figure: DeskFigure, } | { "list": "waits" } | { "list": "people" } | { "list": "counterparty_sessions", 
/**
 * Its id.
 */
id: string, };

/**
 * The desk for a date range.
 */
export type DeskOverview = { 
/**
 * The range read.
 */
query: DeskQuery, 
/**
 * Sessions in it.
 */
sessions: number, 
/**
 * Per currency.
 */
money: Array<CurrencyFigures>, 
/**
 * Per month and currency, oldest first (the chart).
 */
months: Array<MonthFigures>, 
/**
 * Waits.
 */
waits: WaitFigures, 
/**
 * The slowest waits, slowest first (at most ten).
 */
slowest: Array<WaitRow>, 
/**
 * Decisions by person and role.
 */
people: Array<PersonFigures>, 
/**
 * Breaches.
 */
breaches: number, 
/**
 * Disputed sessions.
 */
disputes: number, 
/**
 * Counterparties with sessions in range, most sessions first.
 */
counterparties: Array<CounterpartyRow>, };

/**
 * Which sessions the desk reads: a date range (days, `YYYY-MM-DD`, both
 * inclusive, on the session's first entry) and an optional protocol.
 */
export type DeskQuery = { 
/**
 * First day, inclusive.
 */
from?: string | null, 
/**
 * Last day, inclusive.
 */
to?: string | null, 
/**
 * Only this protocol (`ANP/0.1`, `concordia`, …).
 */
protocol?: string | null, };

/**
 * The sessions behind a figure.
 */
export type DeskSessions = { 
/**
 * The figure.
 */
figure: DeskFigure, 
/**
 * Its sessions, as History lists them.
 */
rows: Array<SessionRow>, };

/**
 * A disputed session at a glance, and what a person can do next.
 */
export type DisputeView = { 
/**
 * Which host (local id).
 */
host_id: string, 
/**
 * Its name for people.
 */
host_label: string, 
/**
 * Its URL.
 */
host_url: string, 
/**
 * Which session.
 */
session_id: string, 
/**
 * Its protocol.
 */
protocol: string, 
/**
 * Who is on the other side (counterparty text).
 */
counterparty: string, 
/**
 * When this console found it (RFC 3339); null for a dispute found
 * before this was recorded.
 */
detected_at: string | null, 
/**
 * The exact seq that failed.
 */
failing_seq: number, 
/**
 * The failed checks.
 */
checks: Array<string>, 
/**
 * In words.
 */
detail: string, 
/**
 * The request the host answered with the conflicting record.
 */
request: string | null, 
/**
 * True when the host's conflicting answer was kept byte for byte (the
 * evidence export holds it beside the stored copy).
 */
host_answer_kept: boolean, 
/**
 * The person's acknowledgement, once given.
 */
acknowledged: AcknowledgementView | null, };

/**
 * What a change means, always read from the buyer's side (the side a
 * price that goes down is good for); a protocol crate's diff decides it,
 * one rule per term, so the interface never guesses from a field's name.
 */
export type Effect = "better" | "worse";

/**
 * The payload of `engine://changed`.
 */
export type EngineEvent = { 
/**
 * What changed.
 */
what: ChangeScope, 
/**
 * On which host, when it is one.
 */
host_id?: string | null, 
/**
 * In which session, when it is one.
 */
session_id?: string | null, };

/**
 * Export formats.
 */
export type ExportFormat = "json" | "csv";

/**
 * Where an export was written.
 */
export type ExportResult = { 
/**
 * The file path.
 */
path: string, 
/**
 * Its size in bytes.
 */
bytes: number, };

/**
 * One problem with an edited counter.
 */
export type FieldError = { 
/**
 * JSON path, e.g. `line_items[0].quantity`, `terms/price/value`.
 */
path: string, 
/**
 * What is wrong, in words.
 */
message: string, };

/**
 * A counterparty's proposal beside our side's latest earlier one.
 */
export type Gap = { 
/**
 * Our side's proposal's seq.
 */
seq: number, 
/**
 * Its amount.
 */
ours: Amount, 
/**
 * From ours to theirs (a distance, so no better or worse).
 */
change: Change, };

/**
 * What the org's own agent asks a person about.
 */
export type GateRequest = { 
/**
 * The agent's request id (what the decision answers).
 */
request_id: string, 
/**
 * What it asks to do (`accept`).
 */
action: string, 
/**
 * The amount it asks about, when stated.
 */
amount: Amount | null, 
/**
 * The policy threshold that amount crossed, when the host names it.
 */
threshold: Amount | null, };

/**
 * What the person asks to give.
 */
export type GiveStandIn = { 
/**
 * At which host.
 */
host_id: string, 
/**
 * Who stands in (a colleague's email).
 */
to: string, 
/**
 * Which of the person's roles.
 */
roles: Array<string>, 
/**
 * The first day (`YYYY-MM-DD`), in this computer's zone.
 */
from_date: string, 
/**
 * The last day, inclusive.
 */
to_date: string, };

/**
 * The session log this console holds, checked in place of a filed one.
 */
export type HeldLog = { 
/**
 * The host the session is on.
 */
host_id: string, 
/**
 * The session, as the console names it (`oanp:<id>`).
 */
session_id: string, 
/**
 * Its entries as stored.
 */
entries: number, };

/**
 * Search and filter of the history list; every member optional.
 */
export type HistoryFilter = { 
/**
 * Matches the counterparty's names or the session id (case-insensitive).
 */
text?: string | null, 
/**
 * Matches the counterparty's names or fingerprint (case-insensitive).
 */
counterparty?: string | null, 
/**
 * Only sessions of this protocol (`ANP/0.1`, `concordia`).
 */
protocol?: string | null, 
/**
 * Session state.
 */
state?: StateFilter | null, 
/**
 * Last amount at least this (exact decimal).
 */
min_total?: Money | null, 
/**
 * Last amount at most this (exact decimal).
 */
max_total?: Money | null, };

/**
 * One approval as the organization's host recorded it.
 */
export type HostApproval = { 
/**
 * The offer it approved (its event hash).
 */
event_hash: string, 
/**
 * Who (an email).
 */
approved_by: string, 
/**
 * When, as the signed approval says (RFC 3339).
 */
at: string, 
/**
 * The step it counted at, from 1; none from before routing.
 */
step: number | null, 
/**
 * The role it counted as; none from before routing.
 */
role: string | null, 
/**
 * Whom it was made for, when a stand-in made it (an email).
 */
for_person: string | null, 
/**
 * Why the request went where it did ("Above 10,000 USD: rule 2").
 */
reason: string | null, 
/**
 * The rule that fired, from 1; none for a fallback.
 */
rule: number | null, 
/**
 * The policy version; none under the old threshold.
 */
policy_version: number | null, };

/**
 * A connected host and how the poller last found it.
 */
export type HostInfo = { 
/**
 * Local id of the host (UUID).
 */
host_id: string, 
/**
 * Base URL, e.g. `http://127.0.0.1:4100`.
 */
url: string, 
/**
 * A short name for people.
 */
label: string, 
/**
 * True for the embedded sandbox host.
 */
sandbox: boolean, 
/**
 * False after a failed poll, until one succeeds.
 */
reachable: boolean, 
/**
 * The last poll error, in words.
 */
last_error: string | null, 
/**
 * RFC 3339 time of the last successful poll.
 */
last_poll_at: string | null, 
/**
 * Fingerprint of the platform key pinned at enrollment.
 */
platform_fingerprint: string, 
/**
 * The email this console approves as on that host.
 */
approver_email: string, 
/**
 * False for a sandbox host this process no longer runs (a real host
 * was connected since): its history stays readable, nothing is polled,
 * and `reachable` is only how it was last found.
 */
polled: boolean, 
/**
 * True when this console reaches the host over plain HTTP off this
 * machine (a lab host the person allowed, or one connected before
 * plain HTTP was refused): what it exchanges can be read on the way.
 */
plain_http: boolean, 
/**
 * RFC 3339 time the person allowed plain HTTP to this host at connect
 * (the lab override), when they did.
 */
plain_http_allowed_at: string | null, 
/**
 * How this console hears of the host's changes now: at once (a request
 * held open until something changes) or on its poll timer, and why.
 */
updates: HostUpdates, };

/**
 * One host's part of a move.
 */
export type HostMove = { 
/**
 * Local host id.
 */
host_id: string, 
/**
 * Its name for people.
 */
label: string, 
/**
 * True once the host knows the new key (and refuses the old).
 */
moved: boolean, 
/**
 * What happened, for people.
 */
detail: string, };

/**
 * One host's stand-ins for this person.
 */
export type HostStandIns = { 
/**
 * The console's id for the host.
 */
host_id: string, 
/**
 * Its name for people.
 */
host_label: string, 
/**
 * Who the person is there (an email).
 */
me: string, 
/**
 * Given by the person, newest first.
 */
given: Array<StandInView>, 
/**
 * Given to the person, newest first.
 */
received: Array<StandInView>, 
/**
 * The roles the person holds there now (what they may hand over).
 */
my_roles: Array<string>, 
/**
 * Who may stand in.
 */
colleagues: Array<ColleagueView>, 
/**
 * Why the host's list could not be read, when it could not.
 */
error: string | null, };

/**
 * How the console hears of one host's changes (the Hosts screen says it).
 */
export type HostUpdates = { 
/**
 * Waiting (the host answers the moment something changes) or polling.
 */
mode: UpdateMode, 
/**
 * In words, for the Hosts screen: what the mode means, and for
 * polling, why (the host does not offer waiting, a proxy cuts it).
 */
detail: string, };

/**
 * One identity a counterparty is known by.
 */
export type IdentityView = { 
/**
 * The identity as matched (`key:…`, `did:…`, or `<protocol> <id> at
 * <host id>`): what a link names.
 */
identity: string, 
/**
 * The same as a person reads it: a protocol id with its host's label.
 */
label: string, 
/**
 * `key`, `did` or `id`.
 */
kind: string, 
/**
 * Its first entry's time.
 */
first_seen: string, 
/**
 * Its last entry's time.
 */
last_seen: string, 
/**
 * Sessions it appears in.
 */
sessions: number, 
/**
 * True when this key took over from another within a session.
 */
changed_mid_session: boolean, 
/**
 * The key this one took over from: the counterparty's key used
 * before it under the same protocol id (an agent that changed keys
 * between sessions, or within one).
 */
replaces: string | null, };

/**
 * The argument of `import_receipt`: the bytes the webview read from the
 * files the person chose, exactly as read.
 */
export type ImportReceipt = { 
/**
 * The receipt's protocol (`oanp`).
 */
protocol: string, 
/**
 * The receipt file's name, as the person's system named it.
 */
file_name: string, 
/**
 * The receipt file's bytes.
 */
bytes: Array<number>, 
/**
 * The session log file's name, when one was chosen.
 */
log_file_name: string | null, 
/**
 * The session log file's bytes, when one was chosen.
 */
log_bytes: Array<number> | null, };

/**
 * One pending decision, as listed in the inbox.
 */
export type InboxItem = { 
/**
 * Which host.
 */
host_id: string, 
/**
 * Which session.
 */
session_id: string, 
/**
 * The session's protocol, as the host names it (`ANP/0.1`, `concordia`).
 */
protocol: string, 
/**
 * Which view shape this proposal has.
 */
proposal_kind: ProposalKind, 
/**
 * The position of the entry carrying the proposal.
 */
seq: number, 
/**
 * The hash of that entry (an ANP event hash, a Concordia message
 * hash), or the host's reference to a draft: what a decision answers.
 */
event_hash: string, 
/**
 * The entry's own kind (`offer`, `counter_offer`, `negotiate.offer`,
 * `negotiate.counter`).
 */
kind: string, 
/**
 * Whose proposal it is.
 */
side: Side, 
/**
 * Whose, in the protocol's words (`vendor_agent`, `buyer`, a party id).
 */
actor: string, 
/**
 * True for a draft of the org's own agent, waiting to be sent.
 */
is_draft: boolean, 
/**
 * Who is on the other side.
 */
counterparty: Counterparty, 
/**
 * The proposal's exact amount, when it has one.
 */
amount: Amount | null, 
/**
 * The amount of the proposal it is compared with, when both have one:
 * the same side's previous proposal (what the counterparty moved since
 * it last offered), else the one it answers.
 */
previous_amount: Amount | null, 
/**
 * From `previous_amount` to `amount`.
 */
change: Change | null, 
/**
 * How far a counterparty's proposal stands from our side's latest
 * earlier one (our last counter), when that is not already what
 * `change` compares with.
 */
gap: Gap | null, 
/**
 * When the proposal stops being decidable (RFC 3339).
 */
expires_at: string, 
/**
 * The session's verification state.
 */
verification: Verification, 
/**
 * Approvals already given.
 */
approvals_given: number, 
/**
 * Approvals the org's policy needs.
 */
approvals_required: number, 
/**
 * True until the person opened it.
 */
unread: boolean, 
/**
 * Why the host holds it (screening), if it does.
 */
held_reason: string | null, 
/**
 * The chain of approvals the host routed it to under the org's policy
 * of authority, and where it stands (hosts that route only).
 */
chain: ApprovalChain | null, 
/**
 * True while it waits on this person; the inbox lists these first,
 * then those waiting on others (a later step's role, or other holders
 * once this person's approval counts).
 */
waits_on_you: boolean, };

/**
 * The first rows of the inbox and the counts of all of it.
 */
export type InboxPage = { 
/**
 * The rows asked for, soonest expiry first.
 */
items: Array<InboxItem>, 
/**
 * Pending decisions in the whole inbox.
 */
total: number, 
/**
 * Of those, the ones the person has not opened yet.
 */
unread: number, 
/**
 * Of those, the ones waiting on this person: all but those they
 * already approved that wait only on other approvers. What "waits on
 * you" counts (the tray, the window title), across hosts and protocols.
 */
waiting: number, 
/**
 * Proposals that expired undecided and were not dismissed, soonest
 * first: their own section (Dismiss, and Decline where the protocol
 * still takes one), never counted in `total` or `unread`.
 */
expired: Array<InboxItem>, };

/**
 * Which part of the inbox to build. The UI shows a page at a time, so the
 * engine builds (and the webview holds) only the rows a person can see, not
 * every pending decision on every host.
 */
export type InboxQuery = { 
/**
 * The first `limit` pending decisions, soonest expiry first (all when absent).
 */
limit?: number | null, 
/**
 * Extends the page down to this proposal when it lies further, so a
 * selection made elsewhere (a notification) stays in the list.
 */
through?: ProposalRef | null, };

/**
 * What moving to a new key came to, host by host.
 */
export type KeyMove = { 
/**
 * The fingerprint of the key that signs from now on.
 */
fingerprint: string, 
/**
 * Each host that knew the old key, and whether it moved.
 */
hosts: Array<HostMove>, 
/**
 * True when every host moved and the old key is deleted.
 */
finished: boolean, };

/**
 * How the key is protected, as Settings names it.
 */
export type KeyProtection = "secret_store" | "passphrase" | "unsaved";

/**
 * Where the key lives and whether it signs now: the Settings card.
 */
export type KeyStatus = { 
/**
 * How it is protected.
 */
protection: KeyProtection, 
/**
 * One sentence on where it lives, for people.
 */
location: string, 
/**
 * True while decisions may be signed.
 */
unlocked: boolean, 
/**
 * True when the key is in memory (requests to hosts are signed, the
 * inbox fills); false until the first unlock of a passphrase key.
 */
loaded: boolean, 
/**
 * What the person should do now, when anything ("Choose a passphrase").
 */
advice: string | null, 
/**
 * Said once: the plain key file of an earlier build moved here.
 */
notice: string | null, 
/**
 * Minutes without a decision after which the key locks.
 */
idle_lock_minutes: number, 
/**
 * When the key locks for idleness unless the person acts first (RFC
 * 3339), while it is unlocked: the engine locks it lazily, at the next
 * thing asked of it, so the interface reads the status again then.
 */
locks_at: string | null, 
/**
 * Above this amount a decision asks to unlock again (0: never).
 */
confirm_above: string, 
/**
 * The fingerprint of the key that signs now.
 */
fingerprint: string, 
/**
 * While a move to a new key is not finished at every host: the old
 * key's fingerprint (hosts that still know it are signed for with it).
 */
moving_from: string | null, 
/**
 * Every key this console has signed with, oldest first (filled by the
 * engine from its records).
 */
keys: Array<KeyUsed>, };

/**
 * A key this console has signed with, as Settings lists it.
 */
export type KeyUsed = { 
/**
 * Its fingerprint.
 */
fingerprint: string, 
/**
 * When the console began signing with it.
 */
since: string, 
/**
 * When it was retired (no host knows it since); `None` while in use.
 */
retired_at: string | null, };

/**
 * What became of a line.
 */
export type LineStatus = "added" | "removed" | "changed" | "unchanged";

/**
 * A person's link between two identities.
 */
export type LinkView = { 
/**
 * Its id.
 */
link_id: number, 
/**
 * One identity.
 */
a: string, 
/**
 * The other.
 */
b: string, 
/**
 * Who linked them (an email).
 */
linked_by: string, 
/**
 * When.
 */
linked_at: string, };

/**
 * An exact decimal amount as text (`"570000"`, `"1140.50"`): only ever
 * regrouped for display, never turned into a float.
 */
export type Money = string;

/**
 * One point of the desk's chart: a month's agreed money in one currency.
 */
export type MonthFigures = { 
/**
 * `YYYY-MM`.
 */
month: string, 
/**
 * The currency.
 */
currency: string, 
/**
 * Agreed that month (sessions agreed whose first entry is in it).
 */
agreed_total: Money, 
/**
 * Won against opening asks that month.
 */
won: Money, };

/**
 * One check's outcome.
 */
export type OanpCheck = { 
/**
 * `header`, `key`, `signature`, `signer`, `mode`, `terms` or `chain`.
 */
id: string, 
/**
 * Ran and holds.
 */
ok: boolean, 
/**
 * Could not run (then `ok` says nothing).
 */
skipped: boolean, 
/**
 * A sentence saying what was found.
 */
detail: string, };

/**
 * The envelope an offer came in.
 */
export type OanpEnvelopeRef = { 
/**
 * Its `message_id`.
 */
message_id: string, 
/**
 * Its hash (what an ApprovalReceipt's `scope.offer_hash` names).
 */
hash: string, 
/**
 * Its position in the log (1-based).
 */
seq: number, };

/**
 * One inclusion (`warranty`: `included`).
 */
export type OanpInclusion = { 
/**
 * What is included.
 */
kind: string, 
/**
 * Its state, when given.
 */
value: string | null, };

/**
 * The arbiter's report on one invariant.
 */
export type OanpInvariant = { 
/**
 * `I1` … `I7`.
 */
id: string, 
/**
 * Its name.
 */
name: string | null, 
/**
 * Its state as reported (`enforced`, `held`, `signed`).
 */
status: string | null, 
/**
 * The arbiter's sentence.
 */
detail: string | null, 
/**
 * Not reported, or unreadable, and why.
 */
problem: string | null, };

/**
 * An amount in minor units, and in major units when the currency's
 * exponent is known.
 */
export type OanpMoney = { 
/**
 * Integer minor units, as decimal text.
 */
amount_minor: Money, 
/**
 * The currency code as written.
 */
currency: string, 
/**
 * The exact amount in major units (`419.00 USD`); null for a currency
 * whose exponent this console does not know.
 */
amount: Amount | null, };

/**
 * One OANP offer.
 */
export type OanpOffer = { 
/**
 * `offer.propose` or `offer.counter`.
 */
message_type: string, 
/**
 * Who sent it (`buyer`, `merchant`).
 */
sender: string, 
/**
 * Its round, when stated.
 */
round: number | null, 
/**
 * Its price and inclusions.
 */
terms: OanpTerms, };

/**
 * An OANP offer the org's own agent asks about before its `offer.accept`
 * (`proposal_kind: "oanp_offer"`), beside the one it answers, with the
 * arbiter's latest verdict and the rounds left. OANP envelopes carry no
 * signatures: until the arbiter's receipt verifies against the log, what
 * is shown is the org's own agent's mirror, chained and nothing more.
 */
export type OanpOfferView = { 
/**
 * The counterparty's standing offer.
 */
offer: OanpOffer, 
/**
 * The offer it answers (the latest earlier one of the other side), if any.
 */
previous: OanpOffer | null, 
/**
 * Where that previous offer is.
 */
previous_ref: PreviousRef | null, 
/**
 * From the previous price to this one (same currency only).
 */
price_change: Change | null, 
/**
 * Inclusions this offer has that the previous one did not.
 */
inclusions_added: Array<OanpInclusion>, 
/**
 * Inclusions the previous offer had that this one drops.
 */
inclusions_removed: Array<OanpInclusion>, 
/**
 * The envelope that carries it.
 */
envelope: OanpEnvelopeRef, 
/**
 * The arbiter's latest evaluation in the log, when there is one.
 */
verdict: OanpVerdict | null, 
/**
 * The session's round limit, from the arbiter's `session.accept`.
 */
max_rounds: number | null, 
/**
 * Rounds left after this offer's round, when both are known.
 */
rounds_left: number | null, 
/**
 * What the org's own agent asks to do, and for how much.
 */
request: GateRequest | null, 
/**
 * Why the envelopes are not evidence on their own.
 */
notice: string, };

/**
 * One party.
 */
export type OanpParty = { 
/**
 * `buyer` or `merchant`.
 */
role: string, 
/**
 * Its agent id.
 */
agent_id: string | null, 
/**
 * The hash commitment to its private limit.
 */
commitment: string | null, 
/**
 * The most rounds it declared it will take.
 */
max_rounds: number | null, 
/**
 * Its declared currency.
 */
currency: string | null, 
/**
 * The inclusions it wants or puts on the table.
 */
inclusions: Array<OanpInclusion>, 
/**
 * How much it values each inclusion (fractions as written).
 */
utilities: Array<OanpUtility>, 
/**
 * Its other declared preferences, each as JSON text.
 */
other_preferences: Array<string>, 
/**
 * Why it cannot be shown, when it cannot.
 */
problem: string | null, };

/**
 * A member that is there but cannot be read.
 */
export type OanpProblem = { 
/**
 * The member (`verdicts`, `parties`).
 */
member: string, 
/**
 * Why.
 */
reason: string, };

/**
 * An OANP receipt as the console shows it.
 */
export type OanpReceiptView = { 
/**
 * True only when the receipt is proof under this console's settings.
 */
proof: boolean, 
/**
 * What the signature says: `valid`, `invalid`, `unverifiable`, `unsigned`.
 */
status: string, 
/**
 * One sentence: proof or not, and why.
 */
headline: string, 
/**
 * Who signed, by the pinned arbiter keys (never by what the receipt claims).
 */
signer: OanpSigner, 
/**
 * The seven checks, in order: header, key, signature, signer, mode, terms, chain.
 */
checks: Array<OanpCheck>, 
/**
 * Whether test-mode receipts count as proof (the setting `oanp.allow_test_receipts`).
 */
allow_test: boolean, 
/**
 * What the arbiter signed.
 */
signed: OanpSigned, 
/**
 * What the arbiter reports without signing it.
 */
report: OanpReport, 
/**
 * Names of receipt members this console does not know (kept, never trusted).
 */
unknown_members: Array<string>, };

/**
 * Everything but `signed_payload`: the arbiter's unverified report.
 */
export type OanpReport = { 
/**
 * The sentence every part of the report is shown under.
 */
notice: string, 
/**
 * The session id the receipt states.
 */
session_id: string | null, 
/**
 * `agreed` or `closed`, as stated.
 */
state: string | null, 
/**
 * Enforced or only recorded, as stated.
 */
enforcement: string | null, 
/**
 * The mode the receipt claims (the signer's pinned mode is what counts).
 */
claimed_mode: string | null, 
/**
 * The arbiter's id, as stated.
 */
arbiter_agent_id: string | null, 
/**
 * `independent` or `affiliated`, as stated.
 */
arbiter_relationship: string | null, 
/**
 * The session's round limit, as stated.
 */
max_rounds: number | null, 
/**
 * Rounds used, as stated.
 */
rounds_completed: number | null, 
/**
 * Buyer and merchant with their declared constraints.
 */
parties: Array<OanpParty>, 
/**
 * Every scored offer, in order.
 */
rounds: Array<OanpRound>, 
/**
 * I1 to I7, in order, then any others.
 */
invariants: Array<OanpInvariant>, 
/**
 * The receipt's own (unsigned) copy of the final terms.
 */
stated_final_terms: OanpTerms | null, 
/**
 * Why the session closed without agreement, when it did.
 */
close: string | null, 
/**
 * The arbiter's own verification result (never evidence).
 */
arbiter_signature_report: string | null, 
/**
 * The chain head and length the receipt names.
 */
chain_head: string | null, 
/**
 * How many envelopes it says the log holds.
 */
chain_length: number | null, 
/**
 * Members that are there but cannot be read, with why.
 */
problems: Array<OanpProblem>, };

/**
 * One scored offer.
 */
export type OanpRound = { 
/**
 * The round, as stated.
 */
round: number | null, 
/**
 * `fair`, `unfair_to_buyer`, `unfair_to_merchant`.
 */
verdict: string | null, 
/**
 * The fairness score as written (`1.0000` is exactly fair).
 */
fairness_score: string | null, 
/**
 * The offer's price.
 */
price: OanpMoney | null, 
/**
 * The price that would have made it fair.
 */
suggested_price: OanpMoney | null, 
/**
 * `stated` (the verdict says it) or `derived` (target cost plus the
 * inclusions' value, computed by this console).
 */
suggested_basis: string | null, 
/**
 * `rejected`, `pending` or `accepted`.
 */
outcome: string | null, 
/**
 * Why the round cannot be shown, when it cannot.
 */
problem: string | null, };

/**
 * `signed_payload`: the signed final terms and session metadata.
 */
export type OanpSigned = { 
/**
 * The signature verifies under a pinned arbiter key: these are the
 * arbiter's bytes (proof needs the other checks too).
 */
genuine: boolean, 
/**
 * The signed final terms: the only terms to act on, when proof.
 */
final_terms: OanpTerms | null, 
/**
 * Why the signed terms cannot be shown, when they cannot.
 */
final_terms_problem: string | null, 
/**
 * The signed session id.
 */
session_id: string | null, 
/**
 * The signed arbiter id.
 */
arbiter_agent_id: string | null, 
/**
 * The signed fairness profile.
 */
fairness_profile: string | null, 
/**
 * The signed round count.
 */
rounds_completed: number | null, 
/**
 * The signed chain head (the envelope before `session.agree`).
 */
chain_head: string | null, };

/**
 * The signer, by the pinned keys.
 */
export type OanpSigner = { 
/**
 * True when the kid and key are a pinned arbiter key.
 */
pinned: boolean, 
/**
 * The protected header's kid, when it has one (counterparty text).
 */
kid: string | null, 
/**
 * Whose key it is, when pinned (`the Valyzen arbiter`).
 */
label: string | null, 
/**
 * `live` or `test`, when pinned.
 */
mode: string | null, };

/**
 * Terms: a price and its inclusions.
 */
export type OanpTerms = { 
/**
 * The price.
 */
price: OanpMoney, 
/**
 * What it includes.
 */
inclusions: Array<OanpInclusion>, };

/**
 * Counter terms beside the OANP offer they answer: what a counter editor
 * shows before it is sent, and the decided view after.
 */
export type OanpTermsDiff = { 
/**
 * The terms answered.
 */
old: OanpTerms, 
/**
 * The terms offered instead.
 */
new: OanpTerms, 
/**
 * From the old price to the new (same currency only).
 */
price_change: Change | null, 
/**
 * Inclusions the new terms add.
 */
inclusions_added: Array<OanpInclusion>, 
/**
 * Inclusions the new terms drop.
 */
inclusions_removed: Array<OanpInclusion>, };

/**
 * How much a party values one inclusion.
 */
export type OanpUtility = { 
/**
 * The inclusion.
 */
kind: string, 
/**
 * The fraction, as written (`0.3`).
 */
value: string, };

/**
 * The arbiter's evaluation of an offer.
 */
export type OanpVerdict = { 
/**
 * `arbitration.evaluate` or `arbitration.reject`.
 */
message_type: string, 
/**
 * `fair`, `unfair_to_buyer`, `unfair_to_merchant`, when stated.
 */
verdict: string | null, 
/**
 * The fairness score as written.
 */
fairness_score: string | null, 
/**
 * The price the arbiter suggests, when it states one.
 */
suggested_price: OanpMoney | null, 
/**
 * Why it refused an offer (`arbitration.reject`).
 */
reason: string | null, 
/**
 * Its position in the log (1-based).
 */
seq: number, };

/**
 * The four shapes of §6.
 */
export type OfferShape = "basic" | "partial" | "conditional" | "bundle";

/**
 * A party's key as this console pinned it the first time it was seen.
 */
export type PartyKey = { 
/**
 * The party id.
 */
party: string, 
/**
 * Fingerprint (lowercase hex SHA-256 of the key), what people compare.
 */
fingerprint: string, 
/**
 * The key (base64url).
 */
public_key: string, };

/**
 * Decisions made by one person in one role.
 */
export type PersonFigures = { 
/**
 * An email.
 */
person: string, 
/**
 * The role, when routed.
 */
role: string | null, 
/**
 * Approvals.
 */
approvals: number, 
/**
 * Declines.
 */
declines: number, 
/**
 * Counters.
 */
counters: number, };

/**
 * The agent that asked.
 */
export type PlainAgent = { 
/**
 * Its gate agent id.
 */
id: string, 
/**
 * Its enrolled name.
 */
name: string, };

/**
 * The counterparty plain terms name.
 */
export type PlainCounterparty = { 
/**
 * Its name as the agent gave it.
 */
name: string, 
/**
 * The identifier the agent gave (domain, DID, vendor number).
 */
id: string, };

/**
 * Where the terms are in the thread's log.
 */
export type PlainEntryRef = { 
/**
 * Its seq.
 */
seq: number, 
/**
 * Its hash: what a receipt's `offer_hash` names.
 */
hash: string, 
/**
 * When the host wrote it.
 */
at: string, 
/**
 * The request id the agent gave.
 */
request_id: string, 
/**
 * The request these terms revise.
 */
revises: string | null, };

/**
 * One row of the line diff.
 */
export type PlainLineDiff = { 
/**
 * Added, removed, changed or unchanged.
 */
status: LineStatus, 
/**
 * The SKU, or the description when there is none.
 */
key: string, 
/**
 * The old line.
 */
old: PlainLineItem | null, 
/**
 * The new line.
 */
new: PlainLineItem | null, 
/**
 * The fields that changed (`quantity`, `unit_price`, …).
 */
fields: Array<string>, };

/**
 * One line of plain terms.
 */
export type PlainLineItem = { 
/**
 * What is bought.
 */
description: string, 
/**
 * The seller's SKU.
 */
sku?: string | null, 
/**
 * How many (exact decimal text).
 */
quantity: Money, 
/**
 * The unit counted, when not each.
 */
unit?: string | null, 
/**
 * Price of one unit (exact decimal text).
 */
unit_price: Money, };

/**
 * Plain terms, as `crates/plain` reads them (amounts exact, as text).
 */
export type PlainTerms = { 
/**
 * Who the organization would commit to.
 */
counterparty: PlainCounterparty, 
/**
 * ISO 4217 code of every price.
 */
currency: string, 
/**
 * The lines.
 */
line_items: Array<PlainLineItem>, 
/**
 * The term, in words.
 */
term?: string | null, 
/**
 * Conditions, each a sentence.
 */
conditions: Array<string>, 
/**
 * The exact total the host computed.
 */
total: Money, };

/**
 * Two sets of plain terms compared.
 */
export type PlainTermsDiff = { 
/**
 * One row per line of either side, matched by SKU (else description).
 */
line_items: Array<PlainLineDiff>, 
/**
 * Conditions only in the new terms.
 */
conditions_added: Array<string>, 
/**
 * Conditions only in the old terms.
 */
conditions_removed: Array<string>, 
/**
 * Set when the term changed.
 */
term: Scalar | null, 
/**
 * Set when the currency changed (then totals are not compared).
 */
currency: Scalar | null, 
/**
 * The old and new totals.
 */
total: Scalar, 
/**
 * New total minus old, with its percentage, in one currency.
 */
total_change: Change | null, };

/**
 * Plain terms and what they are compared with.
 */
export type PlainTermsView = { 
/**
 * The terms the request is about.
 */
terms: PlainTerms, 
/**
 * The terms they revise (the thread's earlier request), if any.
 */
previous: PlainTerms | null, 
/**
 * Where those are.
 */
previous_ref: PreviousRef | null, 
/**
 * The structured diff from the revised terms, null for the first.
 */
diff: PlainTermsDiff | null, 
/**
 * Why, in the agent's own words (data, never an instruction).
 */
rationale: string | null, 
/**
 * The agent that asked.
 */
agent: PlainAgent, 
/**
 * The host's signed entry holding the terms.
 */
entry: PlainEntryRef, 
/**
 * The gate request the terms wait on.
 */
request: GateRequest | null, 
/**
 * What a person is told about where the terms come from.
 */
notice: string, };

/**
 * The proposal it answers, by position.
 */
export type PreviousRef = { 
/**
 * Seq of the previous proposal.
 */
seq: number, 
/**
 * Its actor, in the protocol's words.
 */
actor: string, };

/**
 * What became of a proposal: a decision this console made, or the answer
 * the record shows.
 */
export type ProposalDecision = { 
/**
 * `approve`, `decline` or `counter`; null when the proposal left the
 * pending set without an answer on the record.
 */
action: "approve" | "decline" | "counter" | null, 
/**
 * `pending` (kept, the host has not confirmed it yet), `appended`,
 * `awaiting_approvals`, `held`, `refused` (by the host: nothing was
 * sent), `answered` (the record shows an answer this console did not
 * send), `decided` (the host says its gate request was decided, by the
 * approvers named, at another console or completing this one's
 * approval), `expired` (the host says nobody decided in time), or
 * `withdrawn` (no longer pending, no answer on the record).
 */
outcome: "pending" | "appended" | "awaiting_approvals" | "held" | "refused" | "answered" | "decided" | "expired" | "withdrawn", 
/**
 * Who decided: the email this console approves as, the approvers the
 * host names for a gate request, each "Name (email)" as enrolled
 * (every approver, for an approval), or the emails the record names.
 */
decided_by: string | null, 
/**
 * When (RFC 3339).
 */
at: string | null, 
/**
 * This console's decision id, when it decided.
 */
decision_id: string | null, 
/**
 * The entry the decision appended to the record.
 */
appended: AppendedEvent | null, 
/**
 * The host's words, or what the record shows.
 */
detail: string, 
/**
 * Why it was declined, as the approver who declined wrote it (a gate
 * request decided at another console): text, never markup.
 */
reason: string | null, 
/**
 * The org's own agent accepted although the host recorded that it
 * must not (a decline, a counter, or nobody deciding in time): one
 * sentence naming the accept. What a person must act on at once.
 */
breach: string | null, 
/**
 * A counter's terms offered instead, against the proposal they answer,
 * as the counter editor showed them: this console's counter as it was
 * sent, the terms the host recorded for a counter made at another
 * console, or the counter on the log when only the log shows it (an
 * ANP counter-offer). Null for any other decision, and for terms that
 * no longer read as the protocol's counter.
 */
countered: ProposalDiff | null, };

/**
 * A proposal kind's own view, tagged by `proposal_kind`.
 */
export type ProposalDetail = { "proposal_kind": "anp_offer" } & AnpOfferView | { "proposal_kind": "concordia_offer" } & ConcordiaOfferView | { "proposal_kind": "oanp_offer" } & OanpOfferView | { "proposal_kind": "anex_ask" } & AnexAskView | { "proposal_kind": "plain_terms" } & PlainTermsView;

/**
 * A structured diff of two proposals of one kind, tagged by `proposal_kind`.
 */
export type ProposalDiff = { "proposal_kind": "anp_offer" } & AnpOfferDiff | { "proposal_kind": "concordia_offer" } & ConcordiaOfferDiff | { "proposal_kind": "anex_ask" } & AnexTermsDiff | { "proposal_kind": "oanp_offer" } & OanpTermsDiff | { "proposal_kind": "plain_terms" } & PlainTermsDiff;

/**
 * The kinds of proposal the console decides, one view shape each.
 */
export type ProposalKind = "anp_offer" | "concordia_offer" | "oanp_offer" | "anex_ask" | "plain_terms";

/**
 * What a notification asks the app to open: the payload of
 * `engine://open-proposal`. `decide` names the decision form to open
 * with its confirmation (or reason field) focused ("Approve…",
 * "Decline…" on the notification), so one more key finishes it; the app
 * still signs nothing until that key.
 */
export type ProposalOpening = { 
/**
 * Which host.
 */
host_id: string, 
/**
 * Which session.
 */
session_id: string, 
/**
 * Which proposal (its `event_hash`).
 */
event_hash: string, 
/**
 * The decision form to open at (`approve`, `decline`), or none: just
 * the proposal (a click, "Open").
 */
decide: DecideAction | null, };

/**
 * Names one proposal: the argument of `proposal_view`, `mark_seen` and
 * `validate_counter` (`engine://open-proposal` carries a
 * [`ProposalOpening`]).
 */
export type ProposalRef = { 
/**
 * Which host.
 */
host_id: string, 
/**
 * Which session.
 */
session_id: string, 
/**
 * Which proposal (its `event_hash`).
 */
event_hash: string, };

/**
 * One proposal with everything needed to decide it.
 */
export type ProposalView = { 
/**
 * The inbox row.
 */
item: InboxItem, 
/**
 * What this kind of proposal shows: its own view shape.
 */
detail: ProposalDetail, 
/**
 * The session's verification state.
 */
verification: VerificationView, 
/**
 * Approvals given so far.
 */
approvals: Array<ApprovalGiven>, 
/**
 * True when `expires_at` has passed.
 */
expired: boolean, 
/**
 * True while the proposal waits for a decision (it is in the pending
 * set); false once it was decided, here or elsewhere, or withdrawn.
 */
pending: boolean, 
/**
 * What was decided, when something was: by this console (also while
 * it waits for more approvals), or as the record shows it.
 */
decision: ProposalDecision | null, 
/**
 * What the decision panel may offer.
 */
capabilities: Capabilities, };

/**
 * A receipt's protocol-specific view.
 */
export type ReceiptDetail = { "kind": "oanp_receipt" } & OanpReceiptView;

/**
 * What `export_receipt` wrote: the receipt and its log, byte for byte.
 */
export type ReceiptExport = { 
/**
 * The receipt file.
 */
receipt: ExportResult, 
/**
 * The log file, when there is one.
 */
log: ExportResult | null, };

/**
 * The view shape of a receipt, by protocol.
 */
export type ReceiptKind = "oanp_receipt";

/**
 * The receipts screen: what is filed, what a person removed, and the
 * settings in effect that loosen what counts as proof.
 */
export type ReceiptList = { 
/**
 * Every filed receipt, the latest first, verified now.
 */
receipts: Array<ReceiptRow>, 
/**
 * Every removal, the latest first: the record stays when the receipt goes.
 */
removed: Array<ReceiptRemoval>, 
/**
 * As [`ReceiptView::relaxed`].
 */
relaxed: Array<string>, };

/**
 * Names one filed receipt.
 */
export type ReceiptRef = { 
/**
 * Its id.
 */
receipt_id: string, };

/**
 * The record a removal leaves: which receipt (its file and SHA-256), what
 * it said when it was removed, who removed it and when. The bytes are gone.
 */
export type ReceiptRemoval = { 
/**
 * The id the receipt had.
 */
receipt_id: string, 
/**
 * Its protocol's wire name.
 */
protocol: string, 
/**
 * The file it was imported from.
 */
file_name: string, 
/**
 * Lowercase hex SHA-256 of the receipt's bytes.
 */
receipt_sha256: string, 
/**
 * The log file's name, when one was filed with it.
 */
log_file_name: string | null, 
/**
 * Lowercase hex SHA-256 of the log's bytes, when there was one.
 */
log_sha256: string | null, 
/**
 * Filed by the sandbox.
 */
sandbox: boolean, 
/**
 * When it was filed.
 */
imported_at: string, 
/**
 * The signed session id it named (counterparty text).
 */
session_id: string | null, 
/**
 * What it said when it was removed (proof or not, and why).
 */
headline: string, 
/**
 * When it was removed.
 */
removed_at: string, 
/**
 * Who removed it: the approver's name as this console had it.
 */
removed_by_name: string, 
/**
 * And email.
 */
removed_by_email: string, };

/**
 * One filed receipt in a list.
 */
export type ReceiptRow = { 
/**
 * Its id in this console.
 */
receipt_id: string, 
/**
 * Its protocol's wire name (`oanp`).
 */
protocol: string, 
/**
 * The file it was imported from.
 */
file_name: string, 
/**
 * Whether a session log was imported with it.
 */
has_log: boolean, 
/**
 * When it was imported.
 */
imported_at: string, 
/**
 * Put there by the sandbox, not by the person.
 */
sandbox: boolean, 
/**
 * The signed session id, when there is one (counterparty text).
 */
session_id: string | null, 
/**
 * Proof under this console's settings.
 */
proof: boolean, 
/**
 * What the signature says.
 */
status: string, 
/**
 * Signed by a test-mode key.
 */
test_mode: boolean, 
/**
 * One sentence: proof or not, and why.
 */
headline: string, };

/**
 * One filed receipt in full.
 */
export type ReceiptView = { 
/**
 * As in the list.
 */
row: ReceiptRow, 
/**
 * The log file's name, when one was imported.
 */
log_file_name: string | null, 
/**
 * Lowercase hex SHA-256 of the receipt's bytes as imported.
 */
receipt_sha256: string, 
/**
 * Lowercase hex SHA-256 of the log's bytes, when there is one.
 */
log_sha256: string | null, 
/**
 * The receipt's size in bytes.
 */
receipt_bytes: number, 
/**
 * The log's size in bytes, when there is one.
 */
log_bytes: number | null, 
/**
 * The protocol's view.
 */
detail: ReceiptDetail, 
/**
 * When no log was filed with the receipt and this console holds the
 * session it signs (an OANP session its agent mirrored through the
 * gate): that session, whose log the receipt was checked against.
 */
held_log: HeldLog | null, 
/**
 * The same bytes were filed before: this is that filing (its name and
 * time), not a second copy. Only an import says so.
 */
filed_before: boolean, 
/**
 * Settings in effect that loosen what counts as proof (OANP's test-mode
 * receipts), one sentence each: shown on every receipt view while on.
 */
relaxed: Array<string>, };

/**
 * An old and a new value, as text; null where a side has none.
 */
export type Scalar = { 
/**
 * Before.
 */
old: string | null, 
/**
 * After.
 */
new: string | null, };

/**
 * Proposal amounts by round, per side, for a chart (sides without an
 * amount have no points).
 */
export type Series = { 
/**
 * The counterparty's proposals.
 */
counterparty: Array<SeriesPoint>, 
/**
 * Ours.
 */
ours: Array<SeriesPoint>, };

/**
 * One point of a per-side proposal series.
 */
export type SeriesPoint = { 
/**
 * 1-based round of that side.
 */
round: number, 
/**
 * Entry seq.
 */
seq: number, 
/**
 * Exact amount.
 */
total: Money, };

/**
 * A session in full.
 */
export type SessionDetail = { 
/**
 * The list row.
 */
row: SessionRow, 
/**
 * Every stored entry.
 */
timeline: Array<TimelineEvent>, 
/**
 * Amounts by round, per side.
 */
series: Series, 
/**
 * Decisions made from this console.
 */
decisions: Array<DecisionRow>, 
/**
 * The host's record of every approval in the session, made here or at
 * another console: who, as which role at which step, for whom, under
 * which rule (ANP sessions with an accept; a gate or ANEX session's
 * receipts say it themselves). Empty until read.
 */
host_approvals: Array<HostApproval>, 
/**
 * Verification state with evidence.
 */
verification: VerificationView, 
/**
 * The agreed terms, whole, when the session ended in an agreement.
 */
agreed: AgreedTerms | null, 
/**
 * When disputed: where, what, the evidence kept and the person's note.
 */
dispute: DisputeView | null, };

/**
 * Names one session: the payload of `engine://open-session`.
 */
export type SessionRef = { 
/**
 * Which host.
 */
host_id: string, 
/**
 * Which session.
 */
session_id: string, };

/**
 * One session in the history list.
 */
export type SessionRow = { 
/**
 * Which host.
 */
host_id: string, 
/**
 * Which session.
 */
session_id: string, 
/**
 * Its protocol (`ANP/0.1`, `concordia`).
 */
protocol: string, 
/**
 * The counterparty.
 */
counterparty: Counterparty, 
/**
 * The host's status (`open`, `closed`, `accepted`, `active`, …).
 */
status: string, 
/**
 * Where it stands in the console's one vocabulary, whatever the
 * protocol calls it: what the row shows and the State filter offers.
 */
state: SessionState, 
/**
 * True for sandbox sessions.
 */
sandbox: boolean, 
/**
 * Verification state.
 */
verification: Verification, 
/**
 * Entries stored locally.
 */
event_count: number, 
/**
 * The latest proposal's amount, if it has one.
 */
last_amount: Amount | null, 
/**
 * Pending decisions.
 */
pending: number, 
/**
 * Proposals the org's own agent accepted against the person's
 * decision (declined, countered, or expired undecided): each offer
 * view says which and at what seq.
 */
breaches: number, 
/**
 * Time of the latest entry (RFC 3339).
 */
updated_at: string, };

/**
 * Where a session stands, in one vocabulary for every protocol.
 */
export type SessionState = "open" | "agreed" | "closed";

/**
 * One session of a counterparty, with what was won in it.
 */
export type SessionWin = { 
/**
 * The session.
 */
session: SessionRef, 
/**
 * Its protocol.
 */
protocol: string, 
/**
 * Open, agreed or closed.
 */
state: SessionState, 
/**
 * Its first entry.
 */
opened_at: string, 
/**
 * The currency, when there is money.
 */
currency: string | null, 
/**
 * The counterparty's opening ask.
 */
opening: Money | null, 
/**
 * The agreed total, when agreed.
 */
agreed: Money | null, 
/**
 * Opening minus agreed.
 */
won: Money | null, 
/**
 * Of the opening ask, two places.
 */
won_percent: string | null, };

/**
 * One setting as the interface shows it.
 */
export type Setting = { 
/**
 * Stable id (`notify.dispute`).
 */
id: string, 
/**
 * Which heading it sits under.
 */
group: string, 
/**
 * Its name for people.
 */
label: string, 
/**
 * One sentence on what it does.
 */
help: string, 
/**
 * For a toggle whose "on" loosens a safeguard: what turning it on
 * changes, for the person to confirm before it is saved.
 */
confirm_on: string | null, 
/**
 * The value in effect.
 */
value: unknown, 
/**
 * The value when nothing was saved.
 */
default: unknown, } & ({ "kind": "toggle" } | { "kind": "number", 
/**
 * Smallest allowed.
 */
min: number, 
/**
 * Largest allowed.
 */
max: number, 
/**
 * What it counts, for people ("seconds").
 */
unit: string, } | { "kind": "text", 
/**
 * How the interface should offer it.
 */
input: string, 
/**
 * Longest allowed, in characters.
 */
max_len: number, } | { "kind": "choice", 
/**
 * Every value allowed, in the order to offer them.
 */
options: Array<SettingChoice>, });

/**
 * One value a [`SettingKind::Choice`] setting may take.
 */
export type SettingChoice = { 
/**
 * The value saved (`dark`).
 */
value: string, 
/**
 * Its name for people ("Dark").
 */
label: string, };

/**
 * What kind of value a setting takes, and its limits.
 */
export type SettingKind = { "kind": "toggle" } | { "kind": "number", 
/**
 * Smallest allowed.
 */
min: number, 
/**
 * Largest allowed.
 */
max: number, 
/**
 * What it counts, for people ("seconds").
 */
unit: string, } | { "kind": "text", 
/**
 * How the interface should offer it.
 */
input: string, 
/**
 * Longest allowed, in characters.
 */
max_len: number, } | { "kind": "choice", 
/**
 * Every value allowed, in the order to offer them.
 */
options: Array<SettingChoice>, };

/**
 * The settings screen: every setting, the approver with the key, the data dir.
 */
export type SettingsView = { 
/**
 * Every setting, in the order to show them.
 */
settings: Array<Setting>, 
/**
 * Who this console approves as.
 */
approver: ApproverCard, 
/**
 * Where all state lives (read only: `COUNTERSIGN_DATA_DIR` chooses it).
 */
data_dir: string, 
/**
 * Where the approver key lives and whether it signs now.
 */
key: KeyStatus, };

/**
 * Which side of a session an entry is from.
 */
export type Side = "counterparty" | "ours";

/**
 * One delegation as the screen lists it.
 */
export type StandInView = { 
/**
 * Its id at the host.
 */
delegation_id: string, 
/**
 * Who gave it (an email).
 */
from: string, 
/**
 * Their name.
 */
from_name: string, 
/**
 * Who stands in (an email).
 */
to: string, 
/**
 * Their name.
 */
to_name: string, 
/**
 * The roles handed over.
 */
roles: Array<string>, 
/**
 * The first day (`YYYY-MM-DD`), in `zone`.
 */
from_date: string, 
/**
 * The last day, inclusive, in `zone`.
 */
to_date: string, 
/**
 * The delegator's time zone (IANA name).
 */
zone: string, 
/**
 * The first moment in force (RFC 3339, UTC).
 */
starts_at: string, 
/**
 * The first moment no longer in force (RFC 3339, UTC).
 */
ends_at: string, 
/**
 * `scheduled`, `in_force`, `ended` or `revoked`.
 */
state: string, 
/**
 * When it was revoked, if it was.
 */
revoked_at: string | null, 
/**
 * Who revoked it (an email), if it was.
 */
revoked_by: string | null, };

/**
 * The screen: every connected host's stand-ins, and the zone days are
 * read in when the person gives one.
 */
export type StandInsView = { 
/**
 * One entry per connected host.
 */
hosts: Array<HostStandIns>, 
/**
 * This computer's time zone (IANA name), in which new delegations'
 * days are given.
 */
zone: string, 
/**
 * Today in that zone (`YYYY-MM-DD`).
 */
today: string, };

/**
 * Acting for another approver under a delegation.
 */
export type StandingIn = { 
/**
 * The holder the decision is made for (an email).
 */
for_person: string, 
/**
 * The delegation (`urn:countersign:delegation:<id>`).
 */
delegation: string, };

/**
 * Sessions counted by protocol and state.
 */
export type StateCount = { 
/**
 * The protocol.
 */
protocol: string, 
/**
 * The state.
 */
state: SessionState, 
/**
 * How many.
 */
count: number, };

/**
 * Session states the history can filter on.
 */
export type StateFilter = "open" | "closed" | "agreed" | "disputed" | "pending";

/**
 * An approval a stand-in made: who, for whom (emails).
 */
export type StoodIn = { 
/**
 * Who approved.
 */
by: string, 
/**
 * For whom.
 */
for_person: string, };

/**
 * One term and its value.
 */
export type Term = { 
/**
 * The term id (`price`, `quantity`, `delivery`).
 */
id: string, 
/**
 * The value as text: a string as it is, a number as its exact decimal
 * value (the JSON number `2000.00` reads `2000`), anything else as
 * canonical JSON.
 */
value: string, 
/**
 * When the value is money: the exact amount with its currency.
 */
amount: Amount | null, 
/**
 * The term's other members (`unit`, `type`, …), as text.
 */
attributes: Array<Attribute>, };

/**
 * One term's change.
 */
export type TermChange = { 
/**
 * The term id.
 */
term: string, 
/**
 * Added, removed or changed.
 */
status: ChangeStatus, 
/**
 * Before.
 */
old: Term | null, 
/**
 * After.
 */
new: Term | null, 
/**
 * When both sides are money: how the amount moved.
 */
amount: AmountChange | null, 
/**
 * Better or worse for the buyer, by `concordia::diff::term_effect`
 * (price, warranty, payment terms, delivery date); null when the term
 * has no direction.
 */
effect: Effect | null, };

/**
 * One term of a proposal, flattened: `line_items[0].unit_price` = `1140`.
 */
export type TermRow = { 
/**
 * Its path in the proposal, as the wire names it (the UI labels it).
 */
name: string, 
/**
 * Its value as the wire carries it (counterparty text: data).
 */
value: string, };

/**
 * One entry in a session timeline.
 */
export type TimelineEvent = { 
/**
 * Position.
 */
seq: number, 
/**
 * Which side it is from, when the protocol says.
 */
side: Side | null, 
/**
 * Who, in the protocol's words (`vendor_agent`, `buyer`, a party id).
 */
actor: string, 
/**
 * The entry's kind.
 */
kind: string, 
/**
 * When.
 */
at: string, 
/**
 * Plain text, numbers as people write them: "Offer: 570,000 USD, 36 months".
 */
summary: string, 
/**
 * The entry's content, as the record carries it.
 */
payload: Record<string, unknown>, 
/**
 * Signer fingerprint or id.
 */
signer: string | null, 
/**
 * `verified`, `unproven` or `failed`.
 */
signature: "verified" | "unproven" | "failed", };

/**
 * The two ways the console hears of a host's changes.
 */
export type UpdateMode = "waiting" | "polling";

/**
 * How far the console trusts a session's record.
 */
export type Verification = "verified" | "unproven" | "disputed";

/**
 * A session's verification state with the evidence behind it.
 */
export type VerificationView = { 
/**
 * The state.
 */
state: Verification, 
/**
 * What went wrong, in words, when disputed; or which entries are unproven.
 */
detail: string | null, 
/**
 * The exact seq that failed, when disputed.
 */
failing_seq: number | null, 
/**
 * The checks that failed (`seq`, `payload_hash`, `prev_hash`,
 * `event_hash`, `signature`, `link`, `pin`, …).
 */
checks: Array<string>, };

/**
 * How long offers waited for a decision.
 */
export type WaitFigures = { 
/**
 * Decisions measured.
 */
decisions: number, 
/**
 * Median wait, seconds.
 */
median_seconds: number | null, 
/**
 * 90th percentile (nearest rank), seconds.
 */
p90_seconds: number | null, 
/**
 * Decisions made after their step's response time.
 */
past_response_time: number, };

/**
 * One wait: an offer arriving, and the decision on it.
 */
export type WaitRow = { 
/**
 * The session.
 */
session: SessionRef, 
/**
 * Its protocol.
 */
protocol: string, 
/**
 * The counterparty's name.
 */
counterparty: string, 
/**
 * When the offer arrived (RFC 3339).
 */
offer_at: string, 
/**
 * When it was decided.
 */
decided_at: string, 
/**
 * Seconds between.
 */
seconds: number, 
/**
 * The step's response time, when the policy set one.
 */
respond_within_minutes: number | null, 
/**
 * When the step was due (RFC 3339), counted from the moment the step
 * opened, as the host said when the decision was made.
 */
due_at: string | null, 
/**
 * True when it was decided after its step was due.
 */
past_response_time: boolean, 
/**
 * Who decided (an email).
 */
person: string, 
/**
 * As which role, when routed.
 */
role: string | null, 
/**
 * `approve`, `decline` or `counter`.
 */
action: string, };
