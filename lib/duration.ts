/** Durations as people write them (`90s`, `30m`, `12h`, `2d`, `1h30m`) and ages as we print them. */
import { isoSeconds, parseTimestamp } from "./clock.ts";
import { UsageError } from "./errors.ts";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * Parses a duration into milliseconds.
 * @example parseDuration("1h30m") // 5_400_000
 */
export function parseDuration(text: string, what = "duration", maxMs = MAX_DURATION_MS): number {
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)];
  if (!isDurationText(text)) {
    throw new UsageError(`${what} "${text}" is not a duration such as 90s, 30m, 12h or 2d`);
  }
  const ms = parts.reduce((total, [, amount, unit]) => total + Number(amount) * UNITS[unit], 0);
  if (!(ms <= maxMs)) throw new UsageError(`${what} "${text}" is longer than ${formatAge(maxMs)}, ${maxMs === MAX_TIMER_MS ? "the longest a timer can wait" : "the longest a duration can mean here"}`);
  return ms;
}

/** Whether `text` is written as a duration (`90s`, `1h30m`), however long. */
export function isDurationText(text: string): boolean {
  return /^(\d+(ms|s|m|h|d|w))+$/.test(text);
}

/** The longest duration anything may be given: 100 years, far past any age robot-army sees, and well inside a Date's range. */
export const MAX_DURATION_MS = 36_500 * UNITS.d;

/** The longest a timer can wait (`setTimeout` takes at most 2^31-1 ms, about 24d 20h); a duration that sets one is bounded by it. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Formats milliseconds as a short age, largest two units: `3d 4h`, `12m 5s`, `0s`.
 * @example formatAge(5_400_000) // "1h 30m"
 */
export function formatAge(ms: number): string {
  if (ms < 0) return `-${formatAge(-ms)}`;
  const order: Array<[string, number]> = [["d", UNITS.d], ["h", UNITS.h], ["m", UNITS.m], ["s", UNITS.s]];
  const seconds = Math.floor(ms / 1000) * 1000;
  const first = order.findIndex(([, size]) => seconds >= size);
  if (first === -1) return "0s";
  const [unit, size] = order[first];
  const out = [`${Math.floor(seconds / size)}${unit}`];
  const next = order[first + 1];
  if (next && seconds % size >= next[1]) out.push(`${Math.floor((seconds % size) / next[1])}${next[0]}`);
  return out.join(" ");
}

/**
 * The ISO time a `--since` value names: a duration counted back from `at` (12h, 30m), or an
 * ISO time as it is; anything else is a UsageError naming the option.
 * @example sinceTime("2h", new Date("2026-01-15T12:00:00Z")) // "2026-01-15T10:00:00Z"
 */
export function sinceTime(value: string, at: Date, option = "--since"): string {
  const time = parseTimestamp(value);
  if (time) return isoSeconds(time);
  if (!isDurationText(value)) {
    throw new UsageError(`${option} "${value}" is not a duration such as 12h or an ISO time such as 2026-01-15T10:00:00Z`);
  }
  return isoSeconds(new Date(at.getTime() - parseDuration(value, option)));
}
