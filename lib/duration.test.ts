import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatAge, MAX_DURATION_MS, MAX_TIMER_MS, parseDuration } from "./duration.ts";
import { UsageError } from "./errors.ts";

test("parses single and compound durations", () => {
  assert.is(parseDuration("90s"), 90_000);
  assert.is(parseDuration("12h"), 43_200_000);
  assert.is(parseDuration("1h30m"), 5_400_000);
  assert.is(parseDuration("2d"), 172_800_000);
});

test("rejects what is not a duration, naming it", () => {
  for (const bad of ["", "12", "h", "1x", "1h 30m", "-1h", "1.5h"]) {
    assert.throws(() => parseDuration(bad, "--older-than"), (e: unknown) => e instanceof UsageError && e.message.includes(`"${bad}"`), bad);
  }
});

test("a duration is at most 100 years, or what its use can hold: a timer at most 2^31-1 ms", () => {
  assert.is(parseDuration("36500d"), MAX_DURATION_MS);
  assert.is(parseDuration("2147483647ms", "daemon.confirm_timeout", MAX_TIMER_MS), 2 ** 31 - 1);
  assert.throws(() => parseDuration("9999999w", "--since"), (e: unknown) => e instanceof UsageError && e.message === '--since "9999999w" is longer than 36500d, the longest a duration can mean here');
  assert.throws(() => parseDuration("99999999999999999999999d"), (e: unknown) => e instanceof UsageError);
  assert.throws(() => parseDuration("30d", "daemon.confirm_timeout", MAX_TIMER_MS), (e: unknown) => e instanceof UsageError && e.message === 'daemon.confirm_timeout "30d" is longer than 24d 20h, the longest a timer can wait');
});

test("formats ages with their two largest units", () => {
  assert.is(formatAge(0), "0s");
  assert.is(formatAge(59_999), "59s");
  assert.is(formatAge(5_400_000), "1h 30m");
  assert.is(formatAge(3 * 86_400_000 + 4 * 3_600_000 + 5_000), "3d 4h");
  assert.is(formatAge(86_400_000 + 5_000), "1d");
});

test.run();
