import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatAge, parseDuration } from "./duration.ts";
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

test("formats ages with their two largest units", () => {
  assert.is(formatAge(0), "0s");
  assert.is(formatAge(59_999), "59s");
  assert.is(formatAge(5_400_000), "1h 30m");
  assert.is(formatAge(3 * 86_400_000 + 4 * 3_600_000 + 5_000), "3d 4h");
  assert.is(formatAge(86_400_000 + 5_000), "1d");
});

test.run();
