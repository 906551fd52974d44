/**
 * The only source of "now" in robot-army. `RA_NOW=<ISO time>` fixes it, which is how
 * scenarios and tests make time-dependent output repeatable.
 */
import { UsageError } from "./errors.ts";

/** The current time, or the time fixed by `RA_NOW`. */
export function now(env: Record<string, string | undefined> = process.env): Date {
  const fixed = env.RA_NOW;
  if (fixed === undefined || fixed === "") return new Date();
  const parsed = parseTimestamp(fixed);
  if (parsed === undefined) {
    throw new UsageError(`RA_NOW "${fixed}" is not an ISO time such as 2026-01-15T10:00:00Z`);
  }
  return parsed;
}

/** The current time as an ISO string with second precision (`2026-01-15T10:00:00Z`). */
export function nowIso(env?: Record<string, string | undefined>): string {
  return isoSeconds(now(env));
}

/** Formats a date as ISO time to the second, the form every file and record uses. */
export function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Reads an ISO time with a zone; anything else is undefined, never a guess. */
export function parseTimestamp(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value !== "string" || !ISO_TIME.test(value)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
