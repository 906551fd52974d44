import { test } from "uvu";
import * as assert from "uvu/assert";
import { rmSync } from "node:fs";
import { SIMULATED_GITHUB, wireEffects } from "../effects.ts";
import { queryAudit } from "../store/audit.ts";
import { git } from "../testing/fixtures.ts";
import { withCleanupWorld } from "../testing/cleanup-world.ts";
import { describePrune, pruneWorktrees } from "./worktree-prune.ts";

const listed = (clone: string) => git(clone, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree ")).map((l) => l.slice(9));

test("git's record of a worktree whose directory is gone is pruned, audited with its path, and reported once git no longer lists it", () =>
  withCleanupWorld(async (w) => {
    const gone = w.addWorktree("issue-1", "robot-army/1-gone");
    const kept = w.addWorktree("issue-2", "robot-army/2-kept");
    rmSync(gone, { recursive: true });
    const [result] = await pruneWorktrees(w);
    assert.equal(result, { repo: "demo/widgets", status: "pruned", pruned: [{ path: gone, why: "gitdir file points to non-existent location" }], left: [] });
    assert.equal(listed(w.clone), [w.clone, kept]);
    assert.equal(describePrune(result), ["demo/widgets: pruned 1 worktree record", `  pruned ${gone} (gitdir file points to non-existent location)`]);
    const audit = queryAudit(w.store, { kind: "worktree.prune" });
    assert.equal(audit.map((r) => r.phase), ["intent", "outcome"]);
    assert.equal(audit[0].body.paths, [gone]);
    assert.equal(audit[1].body.pruned, [gone]);
    const [again] = await pruneWorktrees(w);
    assert.equal(again, { repo: "demo/widgets", status: "nothing" });
    assert.equal(describePrune(again), ["demo/widgets: nothing to prune"]);
    assert.is(queryAudit(w.store, { kind: "worktree.prune" }).length, 2);
  }));

test("below effect level local git is not asked: each repository is not checked, never nothing to prune", () =>
  withCleanupWorld(async (w) => {
    const gone = w.addWorktree("issue-1", "robot-army/1-gone");
    rmSync(gone, { recursive: true });
    const [result] = await pruneWorktrees({ ...w, effects: wireEffects("plan", { github: SIMULATED_GITHUB }) });
    assert.equal(result, { repo: "demo/widgets", status: "not_checked", level: "plan" });
    assert.equal(describePrune(result), ["demo/widgets: not checked (effect level plan; version control is real from local)"]);
    assert.equal(listed(w.clone), [w.clone, gone]);
    assert.equal(queryAudit(w.store, { kind: "worktree.prune" }), []);
  }));

test.run();
