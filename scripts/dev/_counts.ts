/**
 * The counts a stage of `npm test` prints and the run's closing lines: `N passed, N failed`
 * last, as CI reads it, and skipped tests apart from both, with why, on the line above.
 */
import { SKIPPED } from "../../lib/testing/skip.ts";

/** What a stage counted; `skipped` says how many tests it skipped and why (its lines starting "skipped, "). */
export interface Counts {
  passed: number;
  failed: number;
  skipped?: { count: number; reasons: string[] };
}

const COUNTS = /(\d+) passed, (\d+) failed(?:, (\d+) skipped)?/;

/** A stage's counts from the end of its output: its last `N passed, N failed[, N skipped]` line; undefined when it has none. */
export function readCounts(output: string): Counts | undefined {
  const lines = output.replace(/\x1b\[[0-9;]*m/g, "").trimEnd().split("\n");
  const summary = lines.map((line) => COUNTS.exec(line)).filter(Boolean).at(-1);
  if (!summary) return undefined;
  const counts: Counts = { passed: Number(summary[1]), failed: Number(summary[2]) };
  if (summary[3] && Number(summary[3]) > 0) counts.skipped = { count: Number(summary[3]), reasons: lines.filter((line) => line.startsWith(SKIPPED)) };
  return counts;
}

/**
 * The run's closing lines: the skipped tests with every reason given (when any were), then
 * `N passed, N failed`, never counting a skipped test as either.
 * @example closingLines([{ passed: 3, failed: 0, skipped: { count: 2, reasons: ["skipped, no browser: ..."] } }])
 * // "2 skipped: skipped, no browser: ...\n3 passed, 0 failed"
 */
export function closingLines(results: Counts[]): string {
  const sum = (pick: (c: Counts) => number) => results.reduce((total, counts) => total + pick(counts), 0);
  const skipped = sum((c) => c.skipped?.count ?? 0);
  const reasons = [...new Set(results.flatMap((c) => c.skipped?.reasons ?? []))];
  const head = skipped ? `${skipped} skipped: ${reasons.join("; ") || "no reason printed"}\n` : "";
  return `${head}${sum((c) => c.passed)} passed, ${sum((c) => c.failed)} failed`;
}
