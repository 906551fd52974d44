import { test } from "uvu";
import * as assert from "uvu/assert";
import type { GitHubRepository } from "../boundaries/github-types.ts";
import { describeChanges, fingerprintChanges, fingerprintOf } from "./fingerprint.ts";

const REPOSITORY: GitHubRepository = {
  full_name: "demo/widgets",
  default_branch: "main",
  clone_url: "https://github.com/demo/widgets.git",
  html_url: "https://github.com/demo/widgets",
  private: false,
  settings: { visibility: "public", allow_merge_commit: true, owner: "demo" },
};

test("a fingerprint holds the settings, the default branch, private and the clone's path, keys sorted", () => {
  const fingerprint = fingerprintOf(REPOSITORY, "/src/widgets");
  assert.equal(Object.keys(fingerprint), ["allow_merge_commit", "default_branch", "owner", "path", "private", "visibility"]);
  assert.equal(fingerprint, { allow_merge_commit: true, default_branch: "main", owner: "demo", path: "/src/widgets", private: false, visibility: "public" });
});

test("the repository's own fields win over a setting of the same name", () => {
  const fingerprint = fingerprintOf({ ...REPOSITORY, private: true, settings: { private: false, default_branch: "old" } }, "/x");
  assert.is(fingerprint.private, true);
  assert.is(fingerprint.default_branch, "main");
});

test("the same settings in another key order are the same fingerprint", () => {
  const a = fingerprintOf({ ...REPOSITORY, settings: { nested: { b: 1, a: 2 }, x: 1 } }, "/x");
  const b = fingerprintOf({ ...REPOSITORY, settings: { x: 1, nested: { a: 2, b: 1 } } }, "/x");
  assert.equal(fingerprintChanges(a, b), []);
  assert.is(JSON.stringify(a), JSON.stringify(b));
});

test("changes name each setting that moved, appeared or went, in key order", () => {
  const approved = fingerprintOf(REPOSITORY, "/src/widgets");
  const seen = fingerprintOf({ ...REPOSITORY, private: true, settings: { visibility: "private", owner: "demo", archived: false } }, "/src/other");
  assert.equal(fingerprintChanges(approved, seen), [
    { setting: "allow_merge_commit", from: true, to: undefined },
    { setting: "archived", from: undefined, to: false },
    { setting: "path", from: "/src/widgets", to: "/src/other" },
    { setting: "private", from: false, to: true },
    { setting: "visibility", from: "public", to: "private" },
  ]);
});

test("changes read as words", () => {
  assert.is(
    describeChanges([
      { setting: "private", from: false, to: true },
      { setting: "default_branch", from: "main", to: "trunk" },
      { setting: "archived", from: undefined, to: false },
    ]),
    'private false -> true, default_branch "main" -> "trunk", archived (none) -> false',
  );
  assert.is(describeChanges([]), "");
});

test.run();
