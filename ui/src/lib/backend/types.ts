/**
 * The contract's shapes as the interface uses them. Every shape the engine
 * sends or receives is generated from its Rust types (`contract.ts`, see
 * docs/console-contract.md); only what the interface itself assembles is
 * written here.
 */
export type * from "./contract";

/** What the connect form sends: the host, its one-time code, and who enrolls. */
export interface ConnectRequest {
  url: string;
  code: string;
  name: string;
  email: string;
  /** The person's explicit override for a lab host reached over plain HTTP (the engine refuses it otherwise). */
  allow_plain_http: boolean;
}
