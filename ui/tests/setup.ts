import { afterEach, beforeEach, vi } from "vitest";
import { NOW } from "./fixtures";

// Times render in the reader's zone; tests read them in UTC so expectations are fixed.
process.env.TZ = "UTC";

// Every test runs at the same instant (only Date is faked here; timers stay
// real unless a test fakes them too), so fixture expiries never go stale.
beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});
