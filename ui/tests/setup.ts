import { afterEach, beforeEach, vi } from "vitest";
import { setFormatContext } from "../src/lib/model/format";
import { NOW } from "./fixtures";

// Times render in the reader's zone; tests read them in UTC so expectations are fixed.
process.env.TZ = "UTC";

// Every test runs at the same instant (only Date is faked here; timers stay
// real unless a test fakes them too), so fixture expiries never go stale.
beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
  // What the fixtures' app_state says too: British English, UTC.
  setFormatContext({ locale: "en-GB", timeZone: "UTC" });
});
afterEach(() => {
  vi.useRealTimers();
});
