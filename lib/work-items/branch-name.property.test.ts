/** Properties of the branch a work item's worktree gets from its issue's title: always a ref git takes, and only ours. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { holds } from "../testing/property.ts";
import { BRANCH_PREFIX, branchName, SLUG_MAX, titleSlug } from "./branch-name.ts";

/** Titles as anyone who can open an issue writes them: any text, shell and git metacharacters, accents and emoji. */
const titleArb = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: fc.constantFrom("a", "Z", "9", " ", "-", ".", "..", "/", "~", "^", ":", "?", "*", "[", "\\", "@{", ".lock", "\x00", "\x7f", "é", "ß", "ﬁ", "İ", "\u0301"), maxLength: 60 }),
);
const issueArb = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });

/** git's own rules for a ref name (git-check-ref-format(1)), as far as a branch of ours can break them. */
function isValidRefName(name: string): boolean {
  return !/[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{|\/\/|\/\.|\.lock(\/|$)|[./]$/.test(name) && !name.startsWith("-") && !name.startsWith("/") && name !== "@";
}

test("every branch made from a title is a valid ref name, under robot-army/, named for its issue", () => {
  holds("branchName always makes a valid git ref under robot-army/", [issueArb, titleArb], (issue, title) => {
    const name = branchName(issue, title);
    assert.ok(isValidRefName(name), name);
    assert.ok(name.startsWith(`${BRANCH_PREFIX}issue-${issue}`), name);
    assert.match(name.slice(BRANCH_PREFIX.length), /^issue-\d+(-[a-z0-9]+)*$/);
    assert.ok(titleSlug(title).length <= SLUG_MAX);
  }, 3000);
});

test("git check-ref-format agrees on a sample of branches made from titles", () => {
  const names = fc.sample(fc.tuple(issueArb, titleArb), { numRuns: 60 }).map(([issue, title]) => branchName(issue, title));
  for (const name of names) {
    const result = spawnSync("git", ["check-ref-format", "--branch", name], { encoding: "utf8" });
    assert.is(result.status, 0, `git refuses "${name}": ${result.stderr}`);
  }
  console.log(`property: git check-ref-format agrees with branchName ${names.length} cases`);
});

test.run();
