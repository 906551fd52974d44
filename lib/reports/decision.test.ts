import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeWork, workFacts } from "../boundaries/work-facts.ts";
import { appendAudit } from "../store/audit.ts";
import { git, originCloneTemplate, withTempDir } from "../testing/fixtures.ts";
import { configWithRepos, interruptedItem, withStore } from "../testing/items.ts";
import { getItem } from "../work-items/queries.ts";
import { adviceOf, decisionLines, decisionOf } from "./decision.ts";
import { itemReport } from "./item.ts";

const template = originCloneTemplate();
test.after(() => template.remove());

/** A worktree of the clone on `ra/12-fix`: one commit pushed, one not, a changed file and an untracked one. */
function worktreeWithWork(dir: string): { clone: string; worktree: string } {
  const { clone } = template.copy(join(dir, "repos"));
  const worktree = join(dir, "issue-12");
  git(clone, "worktree", "add", "--quiet", "-b", "ra/12-fix", worktree, "origin/main");
  writeFileSync(join(worktree, "a.txt"), "first\n");
  git(worktree, "add", "a.txt");
  git(worktree, "commit", "--quiet", "-m", "First part");
  git(worktree, "push", "--quiet", "origin", "ra/12-fix");
  writeFileSync(join(worktree, "b.txt"), "second\n");
  git(worktree, "add", "b.txt");
  git(worktree, "commit", "--quiet", "-m", "Second part");
  writeFileSync(join(worktree, "a.txt"), "first, changed\n");
  writeFileSync(join(worktree, "notes.md"), "untracked\n");
  return { clone, worktree };
}

test("a worktree's facts: uncommitted files, commits not on the base, and how many origin lacks, as last fetched", () => withTempDir(async (dir) => {
  const { worktree } = worktreeWithWork(dir);
  const facts = await workFacts(worktree, "ra/12-fix", "main");
  assert.equal([facts.present, facts.uncommitted, facts.uncommitted_files, facts.ahead_of_base, facts.unpushed, facts.on_origin], [true, 2, ["a.txt", "notes.md"], 2, 1, true]);
  assert.match(facts.last_commit_at ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(describeWork(facts, "main"), ["uncommitted: 2 files (a.txt, notes.md)", "commits: 2 not on main, 1 not pushed"]);
  // A branch origin never had: every commit of it is unpushed.
  git(worktree, "checkout", "--quiet", "-b", "ra/12-other");
  const other = await workFacts(worktree, "ra/12-other", "main");
  assert.equal([other.unpushed, other.on_origin], [2, false]);
  assert.equal(describeWork(other, "main")[1], "commits: 2 not on main, the branch not on origin");
  // A commit a worker dated where no Date can go: no time, and no throw.
  writeFileSync(join(worktree, "c.txt"), "third\n");
  git(worktree, "add", "c.txt");
  execFileSync("git", ["commit", "--quiet", "-m", "Far off"], { cwd: worktree, env: { ...process.env, GIT_COMMITTER_DATE: "@9999999999999 +0000" } });
  assert.is((await workFacts(worktree, "ra/12-other", "main")).last_commit_at, null);
  const gone = await workFacts(join(dir, "nowhere"), "ra/12-fix", "main");
  assert.equal([gone.present, gone.uncommitted], [false, null]);
  assert.equal(describeWork(gone, "main"), [`worktree: gone (${join(dir, "nowhere")})`]);
}));

test("an interrupted item's decision: how its worker ended in its own last lines, its work, no open pull request, when it last worked", () => withTempDir(async (dir) => {
  const { worktree } = worktreeWithWork(dir);
  await withStore(async (store) => {
    const config = await configWithRepos({ "demo/widgets": 0 });
    const id = interruptedItem(store, { issue: 12, worktree, branch: "ra/12-fix", ended: { reason: "killed", code: null, at: "2026-01-15T09:40:00Z" } });
    // What the holder read from its pane as the worker ended, kept when its end was recorded (lib/work-items/quick-exit.ts).
    appendAudit(store, { kind: "session.last_lines", item: id, sessionId: "s-1", body: { ran_seconds: 2400, ended: "killed", code: null, signal: "SIGKILL", last_lines: ["Running the tests...", "\u001b[31mkilled\u001b[0m"] } });
    const decision = await decisionOf(store, config, itemReport(store, config, getItem(store, id)!), dir);
    assert.equal(decision.ended, { session: "ra-widgets-12", at: "2026-01-15T09:40:00Z", reason: "killed", code: null, signal: "SIGKILL", last_lines: ["Running the tests...", "\u001b[31mkilled\u001b[0m"] });
    assert.equal([decision.work?.uncommitted, decision.work?.ahead_of_base, decision.work?.unpushed], [2, 2, 1]);
    assert.is(decision.pull_request, null);
    assert.is(decision.last_worked_at, [decision.work!.last_commit_at!, "2026-01-15T09:40:00Z"].sort().at(-1));
    assert.is(adviceOf(decision), "resume carries on in its worktree with the worker's context; restart starts a fresh worker there; reset is refused over 2 uncommitted files and 1 commit origin does not have (only --force at a terminal discards them)");
    const lines = decisionLines(decision);
    assert.equal(lines.slice(0, 5), [
      "  ended       killed (signal SIGKILL) at 2026-01-15T09:40:00Z, session ra-widgets-12",
      "    | Running the tests...",
      "    | \\u001b[31mkilled\\u001b[0m",
      "  uncommitted 2 files (a.txt, notes.md)",
      "  commits     2 not on main, 1 not pushed",
    ]);
    assert.is(lines[5], "  pull        none open");
  });
}));

test("what reset would discard is never said to be nothing when git could not tell", () => {
  const unknown = { ended: null, pull_request: null, last_worked_at: null, work: { worktree: "/w", present: true, uncommitted: null, uncommitted_files: [], ahead_of_base: null, unpushed: null, on_origin: null, last_commit_at: null, base: "main", lines: [] } };
  assert.match(adviceOf(unknown), "what reset would discard cannot be told");
  assert.not.match(adviceOf(unknown), "discards nothing");
});

test.run();
