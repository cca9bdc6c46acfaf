/**
 * The one frontend boundary: the only module that talks to Tauri. Views import
 * the Backend interface and the contract types from here.
 */
export type { Backend, Unsubscribe } from "./backend";
export { toCommandError } from "./backend";
export type * from "./types";
