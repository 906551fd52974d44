import { test } from "uvu";
import * as assert from "uvu/assert";
import { isoSeconds, now, parseTimestamp } from "./clock.ts";
import { UsageError } from "./errors.ts";

test("RA_NOW fixes the clock", () => {
  assert.is(isoSeconds(now({ RA_NOW: "2026-01-15T10:00:00Z" })), "2026-01-15T10:00:00Z");
});

test("without RA_NOW the clock is the real time", () => {
  const before = Date.now();
  const value = now({}).getTime();
  assert.ok(value >= before && value <= Date.now());
});

test("a malformed RA_NOW is a usage error naming the value", () => {
  assert.throws(() => now({ RA_NOW: "yesterday" }), (e: unknown) => e instanceof UsageError && /"yesterday"/.test(e.message));
});

test("timestamps need a zone and a real date", () => {
  assert.ok(parseTimestamp("2026-01-15T10:00:00+02:00"));
  assert.is(parseTimestamp("2026-01-15T10:00:00"), undefined);
  assert.is(parseTimestamp("2026-13-45T10:00:00Z"), undefined);
  assert.is(parseTimestamp(42), undefined);
});

test.run();
