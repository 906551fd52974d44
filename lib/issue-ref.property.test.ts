/** Properties of `owner/name#N`: never a throw, never another issue than the one written. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { parseIssueRef } from "./issue-ref.ts";
import { holds } from "./testing/property.ts";

const nameArb = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}$/);
const numberArb = fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }));

/** Text near the form: the form itself, broken pieces of it, and huge or zero numbers. */
const refishArb = fc.oneof(
  fc.tuple(nameArb, nameArb, fc.oneof(numberArb.map(String), fc.stringMatching(/^\d{1,25}$/))).map(([o, n, i]) => `${o}/${n}#${i}`),
  fc.tuple(fc.string({ maxLength: 8 }), fc.constantFrom("/", "#", "/#", "#/", ""), fc.string({ maxLength: 8 })).map((p) => p.join("")),
  fc.constantFrom("../..#1", "./.#1", "a/..#1", "demo/widgets#0", "demo/widgets#9007199254740993", "demo/widgets#00012"),
);

test("parseIssueRef never throws, and what it accepts names a real issue: a positive whole number that is exact", () => {
  holds("parseIssueRef accepts only exact positive issue numbers", [refishArb], (text) => {
    const ref = parseIssueRef(text);
    if (!ref) return;
    assert.ok(Number.isSafeInteger(ref.issue) && ref.issue > 0, `${text} -> ${ref.issue}`);
    assert.is(BigInt(text.slice(text.lastIndexOf("#") + 1)), BigInt(ref.issue), `${text} answered about #${ref.issue}`);
    assert.ok(ref.repo.split("/").every((part) => part !== "." && part !== ".."), `${text} -> ${ref.repo}`);
  }, 2000);
});

test("an issue written as owner/name#N is read back as that repository and number", () => {
  holds("parseIssueRef reads back owner/name#N as written", [nameArb.filter((n) => !/^\.+$/.test(n)), nameArb.filter((n) => !/^\.+$/.test(n)), numberArb], (owner, name, issue) => {
    assert.equal(parseIssueRef(`${owner}/${name}#${issue}`), { repo: `${owner}/${name}`, issue });
  });
});

test.run();
