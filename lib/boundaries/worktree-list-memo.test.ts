import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { commitFile, git, makeGitRepo, withTempDir } from "../testing/fixtures.ts";
import { listWorktreesRemembered, newWorktreeListMemo } from "./worktree-list-memo.ts";
import type { WorktreeListMemo } from "./worktree-list-memo.ts";
import { listWorktrees } from "./worktrees.ts";

/** A clone with two worktrees beside it, each on a branch of its own. */
function withClone(fn: (clone: string, dir: string) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    const clone = makeGitRepo(join(dir, "clone"));
    commitFile(clone, "README.md", "hello\n", "first");
    git(clone, "worktree", "add", "-q", "-b", "one", join(dir, "wt-one"));
    git(clone, "worktree", "add", "-q", "-b", "two", join(dir, "wt-two"));
    await fn(clone, dir);
  });
}

/** What git lists now, without the commits (which the memo leaves out). */
async function gitSays(clone: string) {
  return (await listWorktrees(clone)).map(({ head: _head, ...worktree }) => worktree);
}

/** The memo's answer, checked equal to git's, and whether git had to be asked for it. */
async function ask(clone: string, memo: WorktreeListMemo): Promise<"asked git" | "remembered"> {
  const runs = memo.gitRuns;
  const listed = await listWorktreesRemembered(clone, memo);
  assert.equal(listed, await gitSays(clone));
  return memo.gitRuns > runs ? "asked git" : "remembered";
}

test("git is asked once; while nothing changed the list is remembered, whatever the worktrees' own commits", async () => {
  await withClone(async (clone, dir) => {
    const memo = newWorktreeListMemo();
    assert.is(await ask(clone, memo), "asked git");
    assert.is(await ask(clone, memo), "remembered");
    // A commit in a worktree moves its branch, not git's record of where the worktree is and what it has out.
    commitFile(join(dir, "wt-one"), "a.txt", "a\n", "work");
    git(join(dir, "wt-two"), "status", "--porcelain");
    assert.is(await ask(clone, memo), "remembered");
  });
});

test("a worktree added or removed by hand, another branch checked out, a lock, a move or a detached HEAD: git is asked again", async () => {
  await withClone(async (clone, dir) => {
    const memo = newWorktreeListMemo();
    const changes: Array<[string, () => void]> = [
      ["worktree add", () => git(clone, "worktree", "add", "-q", "-b", "three", join(dir, "wt-three"))],
      ["checkout in a worktree", () => git(join(dir, "wt-one"), "checkout", "-q", "-b", "one-renamed")],
      ["detached HEAD", () => git(join(dir, "wt-two"), "checkout", "-q", "--detach")],
      ["commit on a detached HEAD", () => commitFile(join(dir, "wt-two"), "b.txt", "b\n", "detached work")],
      ["lock", () => git(clone, "worktree", "lock", join(dir, "wt-three"))],
      ["unlock", () => git(clone, "worktree", "unlock", join(dir, "wt-three"))],
      ["move", () => git(clone, "worktree", "move", join(dir, "wt-three"), join(dir, "wt-moved"))],
      ["worktree remove", () => git(clone, "worktree", "remove", join(dir, "wt-moved"))],
      ["main checkout's branch", () => git(clone, "checkout", "-q", "-b", "other-main")],
    ];
    for (const [what, change] of changes) {
      await ask(clone, memo);
      assert.is(await ask(clone, memo), "remembered", `before ${what}`);
      change();
      assert.is(await ask(clone, memo), "asked git", `after ${what}`);
    }
  });
});

test("a worktree deleted from disk by hand reads prunable at once; pruned, it is gone from the list", async () => {
  await withClone(async (clone, dir) => {
    const memo = newWorktreeListMemo();
    await ask(clone, memo);
    rmSync(join(dir, "wt-one"), { recursive: true, force: true });
    assert.is(await ask(clone, memo), "asked git");
    assert.ok((await listWorktreesRemembered(clone, memo)).find((w) => w.path.endsWith("wt-one"))?.prunable);
    git(clone, "worktree", "prune");
    assert.is(await ask(clone, memo), "asked git");
    assert.not.ok((await listWorktreesRemembered(clone, memo)).some((w) => w.path.endsWith("wt-one")));
  });
});

test("an entry's gitdir rewritten in place, or its worktree's .git file replaced, is a change", async () => {
  await withClone(async (clone, dir) => {
    const memo = newWorktreeListMemo();
    await ask(clone, memo);
    // `git worktree repair` and `worktree add` write gitdir in place, not through a lock file.
    const gitdir = join(clone, ".git", "worktrees", "wt-one", "gitdir");
    writeFileSync(gitdir, `${join(dir, "wt-one", ".git")}\n`);
    assert.is(await ask(clone, memo), "asked git");
    const dotGit = join(dir, "wt-two", ".git");
    renameSync(dotGit, `${dotGit}.away`);
    assert.is(await ask(clone, memo), "asked git");
  });
});

test("a clone whose .git is not a folder (a linked worktree used as the clone) is asked every time", async () => {
  await withClone(async (_clone, dir) => {
    const memo = newWorktreeListMemo();
    const linked = join(dir, "wt-one");
    assert.is(await ask(linked, memo), "asked git");
    assert.is(await ask(linked, memo), "asked git");
    assert.is(memo.lists.size, 0);
  });
});

test("a clone whose refs are in reftable, or whose entries name their worktrees by relative paths, is asked every time", async () => {
  await withClone(async (clone, dir) => {
    const memo = newWorktreeListMemo();
    await ask(clone, memo);
    assert.is(await ask(clone, memo), "remembered");
    // With reftable, HEAD files are stubs: what a worktree has out is not in the files the stamp reads.
    mkdirSync(join(clone, ".git", "reftable"));
    assert.is(await ask(clone, memo), "asked git");
    assert.is(await ask(clone, memo), "asked git");
    rmSync(join(clone, ".git", "reftable"), { recursive: true });
    assert.is(await ask(clone, memo), "asked git");
    assert.is(await ask(clone, memo), "remembered");
    // git (2.48 and later) reads a relative gitdir from the entry's real path, which a link on the way changes.
    writeFileSync(join(clone, ".git", "worktrees", "wt-one", "gitdir"), relative(join(clone, ".git", "worktrees", "wt-one"), join(dir, "wt-one", ".git")) + "\n");
    assert.is(await ask(clone, memo), "asked git");
    assert.is(await ask(clone, memo), "asked git");
  });
});

test.run();
