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

test.run();
