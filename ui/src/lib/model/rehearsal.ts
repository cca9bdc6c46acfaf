/**
 * How long the inbox must sit unchanged, after it first shows a pending
 * offer, before the app rehearses the offer view out of sight (App.svelte).
 * Long enough to stay out of the way of launch and of a person who opens an
 * offer at once; short enough to be done before most first opens.
 */
export const REHEARSE_AFTER_MS = 1500;
