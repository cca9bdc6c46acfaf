/** Times and countdowns as people read them, computed from a given "now" so tests control it. */

/** A countdown to an expiry: its text, and whether it is over or close. */
export interface Countdown {
  text: string;
  expired: boolean;
  urgent: boolean;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** How long until `expiresAt`: "2d 04h", "3h 05m", "12m 04s", "45s", or "expired". */
export function countdown(expiresAt: string, now: number): Countdown {
  const end = Date.parse(expiresAt);
  if (Number.isNaN(end)) return { text: "unknown expiry", expired: false, urgent: true };
  const seconds = Math.floor((end - now) / 1000);
  if (seconds <= 0) return { text: "expired", expired: true, urgent: true };
  const days = Math.floor(seconds / 86400);
  const hours = Math.floor((seconds % 86400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const secs = seconds % 60;
  const urgent = seconds < 600;
  if (days > 0) return { text: `${days}d ${pad(hours)}h`, expired: false, urgent };
  if (hours > 0) return { text: `${hours}h ${pad(minutes)}m`, expired: false, urgent };
  if (minutes > 0) return { text: `${minutes}m ${pad(secs)}s`, expired: false, urgent };
  return { text: `${secs}s`, expired: false, urgent };
}

/** A time in the reader's zone as "2026-11-29 14:02"; unparseable text is shown as given. */
export function formatTime(iso: string | null): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}
