import { test } from "uvu";
import * as assert from "uvu/assert";
import type { GitHubIssue } from "../boundaries/github-types.ts";
import type { WorkItem, WorkItemState } from "../work-items/queries.ts";
import { LABEL_REMOVED, decide } from "./decide.ts";

const RULES = { author: "owner", label: "robot-army" };

const issue = (over: Partial<GitHubIssue> = {}): GitHubIssue => ({
  number: 3, title: "Fix it", body: "", state: "open", author: "owner", labels: ["robot-army"],
  created_at: "2026-01-15T10:00:00Z", updated_at: "2026-01-15T10:00:00Z", closed_at: null, html_url: "https://forge.invalid/demo/widgets/issues/3",
  ...over,
});

const item = (state: WorkItemState, labels = ["robot-army"]): WorkItem => ({
  id: 7, repo: "demo/widgets", issue: 3, state, reason: null, title: "Fix it", body: "", author: "owner", labels,
  issue_state: "open", issue_updated_at: null, simulated: false, created_at: "2026-01-15T10:00:00Z", updated_at: "2026-01-15T10:00:00Z",
});

test("an open issue labelled by the author is taken; logins and labels compare without case", () => {
  assert.equal(decide(issue(), undefined, RULES), { kind: "take" });
  assert.equal(decide(issue({ author: "Owner", labels: ["Robot-Army"] }), undefined, RULES), { kind: "take" });
});

test("a labelled issue by anyone else is ignored with the reason; unlabelled or closed issues with no item are nothing", () => {
  assert.equal(decide(issue({ author: "stranger" }), undefined, RULES), { kind: "ignore", reason: "not opened by owner" });
  assert.equal(decide(issue({ labels: [] }), undefined, RULES), { kind: "none" });
  assert.equal(decide(issue({ state: "closed" }), undefined, RULES), { kind: "none" });
});

test("a closed issue makes any live item done, dispatched or not", () => {
  for (const state of ["discovered", "ready", "active", "awaiting_review", "failed"] as const) {
    assert.equal(decide(issue({ state: "closed" }), item(state), RULES), { kind: "done" }, state);
  }
});

test("the label removed before dispatch abandons the item; after dispatch it is a fact, once", () => {
  for (const state of ["discovered", "ready"] as const) {
    assert.equal(decide(issue({ labels: [] }), item(state), RULES), { kind: "abandon", reason: LABEL_REMOVED });
  }
  for (const state of ["dispatching", "active", "awaiting_review"] as const) {
    assert.equal(decide(issue({ labels: [] }), item(state), RULES), { kind: "label-removed-after-dispatch" }, state);
  }
  assert.equal(decide(issue({ labels: [] }), item("active", []), RULES), { kind: "refresh" }, "already recorded: the snapshot has no label");
});

test("a live item whose issue is still open and labelled is refreshed", () => {
  assert.equal(decide(issue({ title: "New title" }), item("ready"), RULES), { kind: "refresh" });
});

test.run();
