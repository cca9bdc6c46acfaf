/**
 * One clock for every countdown on screen: a single one-second timer that
 * runs only while something shows a countdown, instead of one per row.
 */
import { readable } from "svelte/store";

/** Milliseconds since the epoch, updated every second while subscribed. */
export const now = readable(Date.now(), (set) => {
  set(Date.now());
  const timer = setInterval(() => set(Date.now()), 1000);
  return () => clearInterval(timer);
});
