import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { createWorktree } from "../boundaries/worktrees.ts";
import { branchName } from "../work-items/branch-name.ts";
import { placeKeep } from "../ending/keeps.ts";
import { PreconditionError } from "../errors.ts";
import { queryAudit } from "../store/audit.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import { commitFile, git, originCloneTemplate, withTempDir } from "../testing/fixtures.ts";
import { atTimeAsync, makeItem } from "../testing/items.ts";
import { rejects } from "../testing/rejects.ts";
import { endSession, recordSession } from "../work-items/sessions.ts";
import { cleanupCandidates, cleanupItem } from "./cleanup.ts";
import type { CleanupDeps } from "./cleanup.ts";
import { cleanupPass, newBundleCursor } from "./pass.ts";
import { cleanupsOf, latestCleanup } from "./records.ts";
import { AlreadyRemovedError, removeItemWorktree } from "./remove-item.ts";

const at = atTimeAsync;

/** A bare origin, the clone robot-army works from, a store and the deps cleanup takes. */
interface World {
  dir: string;
  origin: string;
  clone: string;
  store: Store;
  deps: CleanupDeps;
}

const template = originCloneTemplate((t) => {
  git(t.clone, "config", "user.name", "Robot Army Tests");
  git(t.clone, "config", "user.email", "tests@robot-army.invalid");
});
test.after(() => template.remove());

function withWorld(fn: (w: World) => Promise<void>, cleanup: Partial<Config["cleanup"]> = {}): Promise<void> {
  return withTempDir(async (dir) => {
    const { origin, clone } = template.copy(dir);
    const stateDir = join(dir, "state");
    const store = await openStore(stateDir);
    const base = await defaultConfig();
    const config = {
      ...base,
      repos: { "demo/widgets": { path: clone, base_branch: "main", max_sessions: 1, priority: 0 } },
      cleanup: { ...base.cleanup, ...cleanup },
    };
    try {
      await fn({ dir, origin, clone, store, deps: { store, config, stateDir, effects: { worktrees: true, level: "local" } } });
    } finally {
      store.close();
    }
  });
}

/** A done item for issue `issue` whose one session worked in a real worktree; `open` leaves its row open. */
async function doneItem(w: World, issue: number, options: { open?: boolean } = {}) {
  const item = makeItem(w.store, { issue, state: "done" });
  const branch = branchName(issue, `Issue ${issue}`);
  const made = await createWorktree({ repoPath: w.clone, baseBranch: "main", root: join(w.dir, "worktrees"), repo: "demo/widgets", issue, branch });
  const session = recordSession(w.store, {
    id: `00000000-0000-4000-8000-00000000000${issue}`, item: item.id, name: `ra-widgets-${issue}`, host: "here", launcher: "process",
    marker: "", worktree: made.path, branch, started_at: "2026-01-15T09:00:00Z", simulated: false,
  });
  if (!options.open) endSession(w.store, session.id, "retired");
  return { item, path: made.path, branch };
}

/** Merges the branch into origin's main from the clone (a merge commit), as the owner's merge on GitHub would. */
function mergeOnOrigin(w: World, branch: string): void {
  git(w.clone, "push", "--quiet", "origin", `${branch}:refs/heads/${branch}`);
  const scratch = join(w.dir, "merger");
  git(w.dir, "clone", "--quiet", w.origin, scratch);
  git(scratch, "-c", "user.name=Owner", "-c", "user.email=owner@robot-army.invalid", "merge", "--quiet", "--no-ff", "-m", "Merge", `origin/${branch}`);
  git(scratch, "push", "--quiet", "origin", "main");
  rmSync(scratch, { recursive: true });
}

test("a merged item's clean worktree and proven branch are both removed: done, with the proof, the path and the branch kept on the record", () =>
  withWorld(async (w) => {
    const { item, path, branch } = await doneItem(w, 1);
    commitFile(path, "work.txt", "work\n", "The work");
    mergeOnOrigin(w, branch);
    const decision = await cleanupItem(w.deps, item.id, { by: "cleanup" });
    assert.is(decision.record.state, "done");
    assert.is(decision.record.worktree, "removed");
    assert.is(decision.record.branch_outcome, "deleted");
    assert.match(decision.record.proof ?? "", "origin's main");
    assert.is(decision.record.worktree_path, path);
    assert.is(decision.record.branch, branch);
    assert.not.ok(existsSync(path));
    assert.is(git(w.clone, "branch", "--list", branch), "");
    // Every commit is on the base: no bundle is needed, and the restore is a plain `git branch` at the tip.
    assert.is(decision.record.bundle, null);
    assert.match(decision.record.restore ?? "", `branch ${branch} ${decision.record.tip}`);
    const kinds = queryAudit(w.store, { item: item.id }).filter((r) => r.phase !== "fact").map((r) => `${r.kind}:${r.phase}`);
    assert.equal(kinds, ["worktree.remove:intent", "worktree.remove:outcome", "bundle.write:intent", "bundle.write:outcome", "branch.delete:intent", "branch.delete:outcome"]);
  }));

test("a branch origin has only under its own name is written to a bundle before it goes, and the bundle brings it back", () =>
  withWorld(async (w) => {
    const { item, path, branch } = await doneItem(w, 2);
    const tip = commitFile(path, "work.txt", "work\n", "Pushed, never merged");
    git(path, "push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
    const { record } = await cleanupItem(w.deps, item.id, { by: "cleanup" });
    assert.is(record.state, "done");
    assert.match(record.proof ?? "", `origin's branch ${branch}`);
    assert.ok(record.bundle && existsSync(record.bundle), "the bundle is on disk");
    assert.match(record.bundle!, join(w.deps.stateDir, "bundles", "demo", "widgets"));
    git(w.clone, "fetch", "--quiet", record.bundle!, `refs/robot-army/bundle/${branch}:refs/heads/${branch}`);
    assert.is(git(w.clone, "rev-parse", `refs/heads/${branch}`), tip, "the restore brings the branch back at its tip");
  }));

test("a commit origin lacks keeps the branch (branch_retained); once pushed, cleanup <id> reconsiders and deletes it", () =>
  withWorld(async (w) => {
    const { item, path, branch } = await doneItem(w, 3);
    commitFile(path, "work.txt", "work\n", "Never pushed");
    const first = await cleanupItem(w.deps, item.id, { by: "cleanup" });
    assert.is(first.record.state, "branch_retained");
    assert.is(first.record.worktree, "removed");
    assert.is(first.record.branch_outcome, "kept");
    assert.match(first.record.reason, "unproven: 1 commit of it is on no branch, tag or merged pull request of origin (asked live)");
    assert.ok(git(w.clone, "branch", "--list", branch).includes(branch));
    assert.equal(cleanupCandidates(w.store), [], "branch_retained is not revisited by the pass");
    git(w.clone, "push", "--quiet", "origin", `${branch}:refs/heads/${branch}`);
    const second = await cleanupItem(w.deps, item.id, { by: "cleanup" });
    assert.is(second.record.state, "done");
    assert.is(second.record.worktree, "absent");
  }));

test("an untracked file keeps both halves: retained with git's own words, the branch not attempted", () =>
  withWorld(async (w) => {
    const { item, path, branch } = await doneItem(w, 4);
    writeFileSync(join(path, "notes.txt"), "only here\n");
    const { record } = await cleanupItem(w.deps, item.id, { by: "pass" });
    assert.is(record.state, "retained");
    assert.match(record.reason, "contains modified or untracked files");
    assert.is(record.branch_outcome, "not_attempted");
    assert.ok(existsSync(join(path, "notes.txt")));
    assert.ok(git(w.clone, "branch", "--list", branch).includes(branch));
    assert.equal(cleanupCandidates(w.store), [], "retained is not revisited by the pass");
  }));

test("an open session row refuses whether or not its process can be seen: skipped, revisited, and not recorded twice", () =>
  withWorld(async (w) => {
    const { item, path } = await doneItem(w, 5, { open: true });
    const first = await cleanupItem(w.deps, item.id, { by: "pass" });
    assert.is(first.record.state, "skipped");
    assert.match(first.record.reason, "ra-widgets-5");
    assert.ok(existsSync(path));
    assert.equal(cleanupCandidates(w.store), [item.id], "skipped is revisited");
    const again = await cleanupItem(w.deps, item.id, { by: "pass" });
    assert.is(again.recorded, false);
    assert.is(cleanupsOf(w.store, item.id).length, 1);
    assert.equal(queryAudit(w.store, { kind: "worktree.remove", item: item.id }), [], "nothing was attempted");
  }));

test("a kept item whose session is open is not offered; cleanup <id> still considers it and says it is live", () =>
  withWorld(async (w) => {
    const { item } = await doneItem(w, 6, { open: true });
    const config = await defaultConfig();
    placeKeep(w.store, item.id, { worker: config.worker });
    assert.equal(cleanupCandidates(w.store), []);
    const { record } = await cleanupItem(w.deps, item.id, { by: "cleanup" });
    assert.is(record.state, "skipped");
  }));

test("only done items with a worktree are cleaned up, and a repository not in the config is refused", () =>
  withWorld(async (w) => {
    const ready = makeItem(w.store, { issue: 7, state: "ready" });
    await rejects(cleanupItem(w.deps, ready.id, { by: "cleanup" }), PreconditionError, "is ready; cleanup considers done items only");
    const never = makeItem(w.store, { issue: 8, state: "done" });
    await rejects(cleanupItem(w.deps, never.id, { by: "cleanup" }), PreconditionError, "never had a worktree");
    assert.equal(cleanupCandidates(w.store), [], "an item that never had a session is not a candidate");
  }));

test("the pass decides only with on_issue_close; without it, cleanup is the owner's to run", () =>
  withWorld(async (w) => {
    const { item, path, branch } = await doneItem(w, 9);
    mergeOnOrigin(w, branch);
    const off = await cleanupPass(w.deps);
    assert.equal(off.decided, { done: 0, branch_retained: 0, retained: 0, skipped: 0 });
    assert.ok(existsSync(path));
    const on = await cleanupPass({ ...w.deps, config: { ...w.deps.config, cleanup: { ...w.deps.config.cleanup, on_issue_close: true, keep_bundles: "30d" } } });
    assert.is(on.decided.done, 1);
    assert.is(latestCleanup(w.store, item.id)?.by, "pass");
    assert.match(on.events[0].line, "cleanup of work item 1 (demo/widgets#9): done");
  }));

/** A done item's branch, pushed under its own name, bundled and deleted by a cleanup on 2026-01-15: the decision recorded. */
async function bundledOnJan15(w: World, issue: number) {
  const { item, path, branch } = await doneItem(w, issue);
  commitFile(path, "work.txt", "work\n", "Pushed");
  git(path, "push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
  return (await at("2026-01-15T10:00:00Z", () => cleanupItem(w.deps, item.id, { by: "cleanup" }))).record;
}

test("a bundle is removed by the pass once it is older than keep_bundles, by the clock of its decision, and audited", () =>
  withWorld(async (w) => {
    const record = await bundledOnJan15(w, 10);
    assert.ok(existsSync(record.bundle!));
    const early = await at("2026-02-10T10:00:00Z", () => cleanupPass(w.deps));
    assert.is(early.bundles_removed, 0);
    assert.ok(existsSync(record.bundle!));
    const late = await at("2026-02-14T10:00:01Z", () => cleanupPass(w.deps));
    assert.is(late.bundles_removed, 1);
    assert.not.ok(existsSync(record.bundle!));
    assert.equal(queryAudit(w.store, { kind: "bundle.remove" }).map((r) => r.phase), ["intent", "outcome"]);
  }));

test("with the daemon's cursor a bundle not old enough yet is read again on each pass until it is; one dealt with is not read again", () =>
  withWorld(async (w) => {
    const record = await bundledOnJan15(w, 12);
    const written = queryAudit(w.store, { kinds: ["bundle.write"], phase: "outcome" })[0];
    const cursor = newBundleCursor();
    assert.is((await at("2026-02-10T10:00:00Z", () => cleanupPass(w.deps, { bundles: cursor }))).bundles_removed, 0);
    assert.equal(cursor.young, [{ id: written.id, at: written.at }], "not old enough yet: kept to read again once it is");
    assert.ok(cursor.after >= written.id);
    assert.is((await at("2026-02-12T10:00:00Z", () => cleanupPass(w.deps, { bundles: cursor }))).bundles_removed, 0);
    assert.is((await at("2026-02-14T10:00:01Z", () => cleanupPass(w.deps, { bundles: cursor }))).bundles_removed, 1);
    assert.not.ok(existsSync(record.bundle!));
    assert.equal([cursor.young, cursor.again], [[], []], "dealt with, it is read no more");
    assert.equal(queryAudit(w.store, { kinds: ["bundle.write"], phase: "outcome", cursor }), []);
  }));

test("an item whose disk is settled is not offered to the pass, whatever else is true of it; one not settled is", () =>
  withWorld(async (w) => {
    const { item } = await doneItem(w, 13);
    assert.equal(cleanupCandidates(w.store), [item.id]);
    // Set by hand, as no record would: the pass reads the column, not the item's records.
    w.store.statement("UPDATE work_items SET disk_settled_at = '2026-01-15T10:00:00Z' WHERE id = ?").run(item.id);
    assert.equal(cleanupCandidates(w.store), []);
  }));

test("worktree remove <id>: the same record with its name; done refused as already_removed; an unfinished item gets no record", () =>
  withWorld(async (w) => {
    const noAnswer = async () => ({ unanswered: "no stdin" as const });
    const { item, branch } = await doneItem(w, 11);
    mergeOnOrigin(w, branch);
    const removed = await removeItemWorktree(w.deps, item.id, { force: false, ask: noAnswer });
    assert.is(removed.record?.state, "done");
    assert.is(removed.record?.by, "worktree remove");
    assert.match(removed.record!.reason, "by robot-army worktree remove");
    await rejects(removeItemWorktree(w.deps, item.id, { force: false, ask: noAnswer }), AlreadyRemovedError, "already_removed");

    const active = makeItem(w.store, { issue: 12, state: "active" });
    const made = await createWorktree({ repoPath: w.clone, baseBranch: "main", root: join(w.dir, "worktrees"), repo: "demo/widgets", issue: 12, branch: "robot-army/issue-12" });
    const s = recordSession(w.store, { id: "00000000-0000-4000-8000-000000000012", item: active.id, name: "ra-widgets-12", host: "here", launcher: "process", marker: "", worktree: made.path, branch: made.branch, started_at: "2026-01-15T09:00:00Z", simulated: false });
    endSession(w.store, s.id, "exited");
    const unfinished = await removeItemWorktree(w.deps, active.id, { force: false, ask: noAnswer });
    assert.is(unfinished.record, null);
    assert.is(unfinished.removal?.worktree.status, "removed");
    assert.is(latestCleanup(w.store, active.id), undefined);
  }));

test("worktree remove <id> --force over an open session row asks for the item id: no answer removes nothing and is recorded", () =>
  withWorld(async (w) => {
    const { item, path } = await doneItem(w, 13, { open: true });
    for (const answer of [{ unanswered: "no stdin" as const }, { line: "14" }]) {
      await rejects(removeItemWorktree(w.deps, item.id, { force: true, ask: async () => answer }), PreconditionError, "nothing was removed");
    }
    assert.ok(existsSync(path));
    const gaveUp = queryAudit(w.store, { kind: "worktree.remove", item: item.id }).map((r) => r.body.gave_up);
    assert.equal(gaveUp, ["no stdin", "answer did not match"]);
    const questions: string[] = [];
    const forced = await removeItemWorktree(w.deps, item.id, { force: true, ask: async (q) => (questions.push(q), { line: String(item.id) }) });
    assert.match(questions[0], "Type the item id");
    // The branch has no commit of its own, so it is on origin's main: proven, and gone too.
    assert.is(forced.record?.state, "done");
    assert.not.ok(existsSync(path));
  }));

test.run();
