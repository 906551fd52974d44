/** Properties of the work item id every verb reads: only the typed usage error, and never another item than the one written. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { UsageError } from "../errors.ts";
import { holds, thrown } from "../testing/property.ts";
import { parseItemId } from "./argument.ts";

const idishArb = fc.oneof(
  fc.integer({ min: -1000, max: Number.MAX_SAFE_INTEGER }).map(String),
  fc.bigInt({ min: 0n, max: 10n ** 25n }).map(String),
  fc.stringMatching(/^[-+ 0x.e\d]{0,12}$/),
  fc.string({ maxLength: 10 }),
  fc.constant(undefined),
);

test("parseItemId throws nothing but a UsageError", () => {
  holds("parseItemId throws only UsageError", [idishArb], (raw) => {
    const error = thrown(() => parseItemId(raw));
    if (error !== undefined) assert.ok(error instanceof UsageError, String(error));
  }, 2000);
});

test("an accepted id is a positive exact whole number spelt as it was written", () => {
  holds("parseItemId accepts only the exact id written", [idishArb], (raw) => {
    let id: number;
    try {
      id = parseItemId(raw);
    } catch {
      return;
    }
    assert.ok(Number.isSafeInteger(id) && id > 0);
    assert.is(String(id), raw);
  }, 2000);
});

test("every positive whole number is read back as itself", () => {
  holds("parseItemId reads back every positive id", [fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })], (id) => {
    assert.is(parseItemId(String(id)), id);
  });
});

test.run();
