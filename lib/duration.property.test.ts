/** Properties of durations as people write them: only the typed usage error, bounded, and the sum of their parts. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { formatAge, isDurationText, MAX_DURATION_MS, MAX_TIMER_MS, parseDuration } from "./duration.ts";
import { UsageError } from "./errors.ts";
import { holds, thrown } from "./testing/property.ts";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const unitArb = fc.constantFrom(...Object.keys(UNIT_MS));

/** Text that looks like a duration often and is garbage the rest of the time. */
const durationishArb = fc.oneof(
  fc.array(fc.tuple(fc.oneof(fc.nat({ max: 100_000 }).map(String), fc.stringMatching(/^\d{1,30}$/)), unitArb), { minLength: 1, maxLength: 4 })
    .map((parts) => parts.map(([n, u]) => n + u).join("")),
  fc.string({ maxLength: 16 }),
  fc.stringMatching(/^[-+ .\d]{0,6}(ms|s|m|h|d|w|x)?[-+ .\d]{0,4}$/),
);

test("parseDuration throws nothing but a UsageError that names the text", () => {
  holds("parseDuration throws only UsageError", [durationishArb, fc.constantFrom(MAX_DURATION_MS, MAX_TIMER_MS)], (text, max) => {
    const error = thrown(() => parseDuration(text, "--since", max));
    if (error !== undefined) assert.ok(error instanceof UsageError && error.message.includes(`"${text}"`), String(error));
  }, 2000);
});

test("an accepted duration is a whole number of milliseconds from 0 to its bound", () => {
  holds("parseDuration accepts only bounded whole milliseconds", [durationishArb, fc.constantFrom(MAX_DURATION_MS, MAX_TIMER_MS)], (text, max) => {
    let ms: number;
    try {
      ms = parseDuration(text, "duration", max);
    } catch {
      return;
    }
    assert.ok(Number.isSafeInteger(ms) && ms >= 0 && ms <= max, `${text} -> ${ms}`);
    assert.ok(isDurationText(text));
  }, 2000);
});

test("a duration written from parts means the sum of its parts", () => {
  const parts = fc.array(fc.tuple(fc.nat({ max: 1000 }), unitArb), { minLength: 1, maxLength: 5 });
  holds("parseDuration reads back the sum of the parts written", [parts], (written) => {
    const text = written.map(([n, u]) => `${n}${u}`).join("");
    const sum = written.reduce((total, [n, u]) => total + n * UNIT_MS[u], 0);
    assert.is(parseDuration(text), sum, text);
  });
});

test("formatAge prints any age without throwing, in at most two units", () => {
  holds("formatAge prints any whole age in at most two units", [fc.integer({ min: -MAX_DURATION_MS, max: MAX_DURATION_MS })], (ms) => {
    assert.match(formatAge(ms), /^-?\d+[dhms]( \d+[hms])?$/);
  });
});

test.run();
