/**
 * A mandate envelope read for people: the agent by name with whether it
 * declares itself an AI, and every other value as plain words, never JSON.
 * Every value is counterparty text.
 */
import { label, valueLabel } from "../../model/labels";

/** The envelope's `agent`, as the offer view states it. */
export interface AgentLine {
  /** The agent's declared name, or null when it gave none. */
  name: string | null;
  /** True only when the envelope says `declared_ai: true`. */
  declaresAi: boolean;
  /** What the agent says about itself, in a sentence. */
  statement: string;
}

/** Reads `agent` ({ name, declared_ai }) whatever shape it arrives in. */
export function agentLine(value: unknown): AgentLine {
  const record = value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  const name = typeof record?.name === "string" && record.name.trim() ? record.name : typeof value === "string" ? value : null;
  const declaresAi = record?.declared_ai === true;
  const statement = declaresAi
    ? "It declares itself an AI agent."
    : record && "declared_ai" in record
      ? "It does NOT declare itself an AI agent (declared_ai is not true). ANP has no undeclared bots: treat this mandate with suspicion."
      : "It does NOT declare itself an AI agent (no declared_ai). ANP has no undeclared bots: treat this mandate with suspicion.";
  return { name, declaresAi, statement };
}

/** A value as plain words: text as it is, lists joined, objects as "key: value", never JSON. */
export function plainText(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return valueLabel(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(plainText).join("; ");
  return Object.entries(value as Record<string, unknown>)
    .map(([key, inner]) => `${label(key)}: ${plainText(inner)}`)
    .join("; ");
}
