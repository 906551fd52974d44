import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseIssueRef } from "./issue-ref.ts";

test("owner/name#N is read as its repository and number; anything else is not an issue", () => {
  assert.equal(parseIssueRef("demo/widgets#12"), { repo: "demo/widgets", issue: 12 });
  assert.equal(parseIssueRef("my-org/some.repo_x#1"), { repo: "my-org/some.repo_x", issue: 1 });
  for (const text of ["demo/widgets", "widgets#1", "demo/widgets#", "demo/widgets#1a", "demo/wid gets#1", " demo/widgets#1"]) {
    assert.is(parseIssueRef(text), undefined, text);
  }
});

test("a number past what is exact, issue 0, and a repository named . or .. are not an issue", () => {
  // 9007199254740993 is read by Number() as 9007199254740992: show would answer about another issue.
  for (const text of ["demo/widgets#9007199254740993", "demo/widgets#99999999999999999999", "demo/widgets#0", "../..#1", "./widgets#1", "demo/..#1"]) {
    assert.is(parseIssueRef(text), undefined, text);
  }
  assert.equal(parseIssueRef("demo/widgets#9007199254740991"), { repo: "demo/widgets", issue: 9007199254740991 });
  assert.equal(parseIssueRef(".github/.x#3"), { repo: ".github/.x", issue: 3 });
});

test.run();
