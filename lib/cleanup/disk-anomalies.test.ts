import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { SIMULATED_GITHUB, wireEffects } from "../effects.ts";
import { listAnomalies } from "../store/anomalies.ts";
import { queryAudit } from "../store/audit.ts";
import { git } from "../testing/fixtures.ts";
import { withCleanupWorld } from "../testing/cleanup-world.ts";
import type { CleanupWorld } from "../testing/cleanup-world.ts";
import { reportDiskAnomalies } from "./disk-anomalies.ts";
import { newWorktreeListMemo } from "../boundaries/worktree-list-memo.ts";
import { recordCleanup } from "./records.ts";
import type { CleanupState } from "./records.ts";

const unresolved = (w: CleanupWorld, kind: "orphan_worktree" | "prunable_worktree") =>
  listAnomalies(w.store, { unresolved: true, kind }).map((a) => ({ action: a.action_id, item: a.item, detail: a.detail }));

function decided(w: CleanupWorld, item: number, path: string, state: CleanupState, worktree: "removed" | "kept"): void {
  recordCleanup(w.store, {
    item, state, reason: "test", worktree_path: path, branch: "b", worktree, branch_outcome: worktree === "removed" ? "deleted" : "not_attempted",
    proof: null, tip: null, bundle: null, restore: null, by: "worktree remove", simulated: false,
  });
}

test("a directory in the worktree root no item claims is an orphan_worktree, raised once, retracted once an item claims it or it is gone", () =>
  withCleanupWorld(async (w) => {
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    const stray = join(w.root, "demo", "widgets", "stray");
    mkdirSync(stray);
    assert.equal(await reportDiskAnomalies(w).then((r) => [r.raised, r.retracted]), [2, 0]);
    const raised = unresolved(w, "orphan_worktree");
    assert.equal(raised.map((a) => a.action), [loose, stray]);
    assert.match(raised[0].detail, `no work item claims it (branch robot-army/9-loose): "robot-army worktree remove ${loose}" removes it`);
    assert.equal(await reportDiskAnomalies(w).then((r) => [r.raised, r.retracted]), [0, 0]);
    w.claim(9, loose, "robot-army/9-loose");
    rmSync(stray, { recursive: true });
    const report = await reportDiskAnomalies(w);
    assert.equal([report.raised, report.retracted], [0, 2]);
    assert.equal(unresolved(w, "orphan_worktree"), []);
    assert.is(queryAudit(w.store, { kind: "anomaly.retracted" }).length, 2);
  }));

test("with the daemon's memo of the clones' worktree lists, a worktree added by hand after a pass is raised on the next, and retracted once removed", () =>
  withCleanupWorld(async (w) => {
    const memo = newWorktreeListMemo();
    const daemon = { ...w, worktreeLists: memo };
    assert.equal(await reportDiskAnomalies(daemon).then((r) => [r.raised, r.retracted]), [0, 0]);
    assert.equal(await reportDiskAnomalies(daemon).then((r) => [r.raised, r.retracted]), [0, 0]);
    const runs = memo.gitRuns;
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    assert.equal(await reportDiskAnomalies(daemon).then((r) => [r.raised, r.retracted]), [1, 0]);
    assert.equal(unresolved(w, "orphan_worktree").map((a) => a.action), [loose]);
    assert.match(unresolved(w, "orphan_worktree")[0].detail, "(branch robot-army/9-loose)");
    assert.is(memo.gitRuns, runs + 1, "git was asked again once the worktree was added, and only then");
    git(w.clone, "worktree", "remove", "--force", loose);
    assert.equal(await reportDiskAnomalies(daemon).then((r) => [r.raised, r.retracted]), [0, 1]);
  }));

test("a finished item's worktree deleted by hand is a prunable_worktree naming worktree remove <id>; an unfinished one's is not; a removal on record retracts it", () =>
  withCleanupWorld(async (w) => {
    const done = w.addWorktree("issue-1", "robot-army/1-done");
    const doneItem = w.claim(1, done, "robot-army/1-done", "done");
    const abandoned = w.addWorktree("issue-2", "robot-army/2-abandoned");
    const abandonedItem = w.claim(2, abandoned, "robot-army/2-abandoned", "abandoned");
    const active = w.addWorktree("issue-3", "robot-army/3-active");
    w.claim(3, active, "robot-army/3-active", "active");
    const retained = w.addWorktree("issue-4", "robot-army/4-retained");
    const retainedItem = w.claim(4, retained, "robot-army/4-retained", "done");
    decided(w, retainedItem, retained, "retained", "kept");
    assert.equal((await reportDiskAnomalies(w)).raised, 0);
    for (const path of [done, abandoned, active, retained]) rmSync(path, { recursive: true });
    const report = await reportDiskAnomalies(w);
    assert.is(report.raised, 3);
    const raised = unresolved(w, "prunable_worktree");
    assert.equal(raised.map((a) => [a.action, a.item]), [[done, doneItem], [abandoned, abandonedItem], [retained, retainedItem]]);
    assert.match(raised[0].detail, `is gone from disk, but no cleanup record says it was removed: "robot-army worktree remove ${doneItem}" settles it`);
    decided(w, doneItem, done, "done", "removed");
    decided(w, abandonedItem, abandoned, "branch_retained", "removed");
    assert.equal(await reportDiskAnomalies(w).then((r) => [r.raised, r.retracted]), [0, 2]);
    assert.equal(unresolved(w, "prunable_worktree").map((a) => a.item), [retainedItem]);
  }));

test("a finished item whose disk is settled is not looked at again; one not settled is, so its worktree deleted by hand is still found", () =>
  withCleanupWorld(async (w) => {
    const [[settled, settledItem], [unsettled, unsettledItem]] = [1, 2].map((n) => {
      const path = w.addWorktree(`issue-${n}`, `robot-army/${n}-done`);
      return [path, w.claim(n, path, `robot-army/${n}-done`, "done")] as const;
    });
    // Set by hand, as no record would: the pass reads the column, not the item's records or its folder.
    w.store.statement("UPDATE work_items SET disk_settled_at = '2026-01-15T10:00:00Z' WHERE id = ?").run(settledItem);
    for (const path of [settled, unsettled]) rmSync(path, { recursive: true });
    assert.equal(await reportDiskAnomalies(w).then((r) => [r.raised, r.retracted]), [1, 0]);
    assert.equal(unresolved(w, "prunable_worktree").map((a) => [a.action, a.item]), [[unsettled, unsettledItem]]);
  }));

test("a settled item's folder that comes back is still its item's: neither an orphan nor prunable, and nothing is removed", () =>
  withCleanupWorld(async (w) => {
    const path = w.addWorktree("issue-1", "robot-army/1-back");
    const item = w.claim(1, path, "robot-army/1-back", "done");
    rmSync(path, { recursive: true });
    git(w.clone, "worktree", "prune");
    decided(w, item, path, "done", "removed");
    assert.equal(await reportDiskAnomalies(w).then((r) => [r.raised, r.retracted]), [0, 0]);
    mkdirSync(join(path, "inside"), { recursive: true });
    assert.equal(await reportDiskAnomalies(w).then((r) => [r.raised, r.retracted]), [0, 0]);
    assert.equal([unresolved(w, "orphan_worktree"), unresolved(w, "prunable_worktree")], [[], []]);
    assert.ok(existsSync(join(path, "inside")), "nothing removed it");
    // Nor is a folder that holds it further down taken for an orphan.
    const holder = join(w.root, "demo", "widgets", "holder");
    const deeper = join(holder, "a");
    const deepItem = w.claim(2, deeper, "robot-army/2-deeper", "done");
    decided(w, deepItem, deeper, "done", "removed");
    mkdirSync(holder);
    assert.equal(await reportDiskAnomalies(w).then((r) => [r.raised, r.retracted]), [0, 0]);
  }));

test("a worktree root reached through a symbolic link: a settled item's folder come back is still found its item's, by the path it recorded", () =>
  withCleanupWorld(async (w) => {
    const real = join(w.dir, "real-worktrees");
    mkdirSync(join(real, "demo", "widgets"), { recursive: true });
    const linked = join(w.dir, "linked-worktrees");
    symlinkSync(real, linked);
    const config = { ...w.config, worktrees: { ...w.config.worktrees, root: linked } };
    const path = join(linked, "demo", "widgets", "issue-1");
    const item = w.claim(1, path, "robot-army/1-linked", "done");
    decided(w, item, path, "done", "removed");
    mkdirSync(path);
    const stray = join(linked, "demo", "widgets", "stray");
    mkdirSync(stray);
    await reportDiskAnomalies({ ...w, config });
    assert.equal(unresolved(w, "orphan_worktree").map((a) => a.action), [stray]);
  }));

test("while a clone's worktrees cannot be listed, orphan_worktree is neither raised nor retracted", () =>
  withCleanupWorld(async (w) => {
    const deep = join(w.root, "elsewhere", "a", "b", "c");
    git(w.clone, "worktree", "add", "--quiet", "-b", "deep", deep, "origin/main");
    await reportDiskAnomalies(w);
    assert.equal(unresolved(w, "orphan_worktree").map((a) => a.action), [deep]);
    renameSync(join(w.clone, ".git"), join(w.clone, "git-away"));
    try {
      assert.equal(await reportDiskAnomalies(w).then((r) => [r.raised, r.retracted]), [0, 0]);
      assert.equal(unresolved(w, "orphan_worktree").map((a) => a.action), [deep]);
    } finally {
      renameSync(join(w.clone, "git-away"), join(w.clone, ".git"));
    }
  }));

test("below effect level local nothing is looked at: nothing raised, and nothing raised before is retracted", () =>
  withCleanupWorld(async (w) => {
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    await reportDiskAnomalies(w);
    rmSync(loose, { recursive: true });
    mkdirSync(join(w.root, "demo", "widgets", "stray"));
    const plan = { ...w, effects: wireEffects("plan", { github: SIMULATED_GITHUB }) };
    assert.equal(await reportDiskAnomalies(plan).then((r) => [r.raised, r.retracted]), [0, 0]);
    assert.equal(unresolved(w, "orphan_worktree").map((a) => a.action), [loose]);
  }));

test.run();
