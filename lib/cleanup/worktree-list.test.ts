import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withCleanupWorld } from "../testing/cleanup-world.ts";
import { diskUsage } from "./disk-usage.ts";
import { recordCleanup } from "./records.ts";
import { listWorktreesOnDisk } from "./worktree-list.ts";

test("every claimed worktree with its condition and cleanup state, then the unclaimed directories, and the total of their sizes", () =>
  withCleanupWorld(async (w) => {
    const clean = w.addWorktree("issue-1", "robot-army/1-clean");
    const one = w.claim(1, clean, "robot-army/1-clean");
    const dirty = w.addWorktree("issue-2", "robot-army/2-dirty");
    writeFileSync(join(dirty, "untracked.txt"), "only here\n");
    const two = w.claim(2, dirty, "robot-army/2-dirty");
    const gone = w.addWorktree("issue-3", "robot-army/3-gone");
    rmSync(gone, { recursive: true });
    const three = w.claim(3, gone, "robot-army/3-gone", "done");
    recordCleanup(w.store, {
      item: three, state: "retained", reason: "git refused", worktree_path: gone, branch: "robot-army/3-gone", worktree: "kept",
      branch_outcome: "not_attempted", proof: null, tip: null, bundle: null, restore: null, by: "pass", simulated: false,
    });
    // A folder git cannot read as a worktree: its condition is unknown, never clean.
    const unreadable = join(w.dir, "not-a-repo", "issue-4");
    mkdirSync(unreadable, { recursive: true });
    const four = w.claim(4, unreadable, "robot-army/4-odd");
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");

    const listing = await listWorktreesOnDisk(w);
    const rows = listing.worktrees.map((r) => [r.path, r.item, r.branch, r.condition, r.cleanup]);
    assert.equal(rows, [
      [clean, one, "robot-army/1-clean", "clean", null],
      [dirty, two, "robot-army/2-dirty", "dirty", null],
      [gone, three, "robot-army/3-gone", "missing", "retained"],
      [unreadable, four, "robot-army/4-odd", "unknown", null],
      [loose, null, "robot-army/9-loose", "unclaimed", null],
    ]);
    const sizes = listing.worktrees.map((r) => r.bytes);
    assert.equal(sizes, [clean, dirty, gone, unreadable, loose].map((p) => diskUsage(p)?.bytes ?? null));
    assert.ok(sizes[0]! > 0);
    assert.is(listing.totalBytes, sizes.reduce((sum: number, n) => sum + (n ?? 0), 0));
  }));

test("a directory in the root is listed unclaimed even when no item was ever recorded, so the list is never empty over disk robot-army made", () =>
  withCleanupWorld(async (w) => {
    assert.equal((await listWorktreesOnDisk(w)).worktrees, []);
    const stray = join(w.root, "demo", "widgets", "issue-7");
    mkdirSync(stray, { recursive: true });
    writeFileSync(join(stray, "left.txt"), "x".repeat(5000));
    const listing = await listWorktreesOnDisk(w);
    assert.equal(listing.worktrees.map((r) => [r.path, r.item, r.branch, r.condition]), [[stray, null, null, "unclaimed"]]);
    assert.ok(listing.totalBytes >= 5000);
  }));

test.run();
