/**
 * The string formats config.toml's schema names (`format: "duration"` and so on), as the
 * config's validator (schema/validate/config.mjs, generated) checks them. One definition each,
 * shared by that validator and by lib/config.ts.
 */
import { MAX_DURATION_MS, MAX_TIMER_MS, parseDuration } from "./duration.ts";

/** Whether `value` is an http:// or https:// URL. */
export function isHttpUrl(value: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function isDuration(value: string, maxMs: number): boolean {
  try {
    parseDuration(value, "duration", maxMs);
    return true;
  } catch {
    return false;
  }
}

/** `90s`, `30m`, `12h`, `2d`, `1h30m`: any length robot-army can count. */
export const duration = { type: "string", validate: (value: string) => isDuration(value, MAX_DURATION_MS) } as const;
/** A duration a timer can wait for (at most about 24 days). */
export const timer = { type: "string", validate: (value: string) => isDuration(value, MAX_TIMER_MS) } as const;
export const url = { type: "string", validate: isHttpUrl } as const;
export const path = { type: "string", validate: (value: string) => value.length > 0 } as const;
