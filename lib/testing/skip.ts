/**
 * Tests a machine cannot run are skipped, never passed: a test file that skips says why in a
 * line of its output starting with `SKIPPED`, and the unit runner and `npm test` print that
 * reason beside their counts (`14 skipped: skipped, no browser: ...` above `N passed, N failed`).
 */
import type { Test } from "uvu";

/** How a test file says why it skipped tests: a line of its output starting with this. */
export const SKIPPED = "skipped, ";

/**
 * `test` itself when `why` is null; otherwise uvu's `test.skip`, once the reason is printed.
 * @example const browserTest = skipWhen(test, browserUnavailable() && `no browser: ${browserUnavailable()}`);
 */
export function skipWhen(test: Test, why: string | null | false): Test {
  if (!why) return test;
  console.log(`${SKIPPED}${why}`);
  return test.skip as unknown as Test;
}
