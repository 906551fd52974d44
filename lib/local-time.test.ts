import { test } from "uvu";
import * as assert from "uvu/assert";
import { inLocalTime } from "./local-time.ts";

test("each UTC time reads in the zone given, with the zone's name; the rest of the text is left alone", () => {
  assert.is(inLocalTime("since 2026-01-15T10:00:00Z, next 2026-07-01T23:30:05.123Z", "Europe/Paris"), "since 2026-01-15 11:00:00 CET, next 2026-07-02 01:30:05 CEST");
  assert.is(inLocalTime("at 2026-01-15T10:00Z", "America/New_York"), "at 2026-01-15 05:00 GMT-5", "a zone without a short English name is named by its offset");
  assert.is(inLocalTime("item 12 (demo/widgets#12) id=2026", "Europe/Paris"), "item 12 (demo/widgets#12) id=2026");
});

test("where the zone reads UTC, a time is left as robot-army wrote it", () => {
  assert.is(inLocalTime("at 2026-01-15T10:00:00Z", "UTC"), "at 2026-01-15T10:00:00Z");
  assert.is(inLocalTime("at 2026-01-15T10:00:00Z", "Europe/London"), "at 2026-01-15T10:00:00Z", "London in winter is UTC");
  assert.is(inLocalTime("at 2026-07-15T10:00:00Z", "Europe/London"), "at 2026-07-15 11:00:00 BST");
});

test("something shaped like a time that is none is left alone", () => {
  assert.is(inLocalTime("2026-13-45T99:00:00Z", "Europe/Paris"), "2026-13-45T99:00:00Z");
});

test.run();
