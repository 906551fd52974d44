import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError, RobotArmyError } from "../errors.ts";
import { commitFile, git, repoTemplate, withTempDir } from "../testing/fixtures.ts";
import { changedFiles, commitsBetween, currentBranch, headCommit, repositoryAt } from "./git.ts";

// Building a repository takes several git calls; each test works in a copy of this one.
const template = repoTemplate();
test.after(() => template.remove());

test("git calls answer on this runtime (dax is called, not a promise of it)", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    assert.is(await headCommit(repo), git(repo, "rev-parse", "HEAD"));
  }));

test("repositoryAt finds the top of the repository and its exclude file from a subfolder", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    mkdirSync(join(repo, "src/deep"), { recursive: true });
    const info = await repositoryAt(join(repo, "src/deep"));
    assert.equal(info, { root: repo, excludeFile: join(repo, ".git/info/exclude") });
  }));

test("repositoryAt in a linked worktree gives the worktree's root and the common exclude file", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const worktree = join(dir, "worktree");
    git(repo, "worktree", "add", "--quiet", "-b", "feature", worktree);
    assert.equal(await repositoryAt(worktree), { root: worktree, excludeFile: join(repo, ".git/info/exclude") });
  }));

test("repositoryAt outside any repository is a precondition error naming the folder", () =>
  withTempDir(async (dir) => {
    try {
      await repositoryAt(dir);
      assert.unreachable("a plain folder is not a repository");
    } catch (error) {
      assert.instance(error, PreconditionError);
      assert.match((error as Error).message, `"${dir}"`);
    }
  }));

test("currentBranch names the branch, and is undefined on a detached HEAD", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    git(repo, "switch", "--quiet", "-c", "feature/x");
    assert.is(await currentBranch(repo), "feature/x");
    git(repo, "switch", "--quiet", "--detach");
    assert.is(await currentBranch(repo), undefined);
  }));

test("headCommit is undefined in a repository with no commits yet, and its branch is the unborn one", () =>
  withTempDir(async (dir) => {
    const repo = join(dir, "empty");
    git(dir, "init", "--quiet", "--initial-branch=main", repo);
    assert.is(await headCommit(repo), undefined);
    assert.is(await currentBranch(repo), "main");
    const first = commitFile(repo, "a.txt", "a\n", "First");
    assert.is(await headCommit(repo), first);
  }));

test("commitsBetween lists the commits after `from`, oldest first, subjects with tabs intact", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const base = git(repo, "rev-parse", "HEAD");
    const one = commitFile(repo, "one.txt", "1\n", "First change");
    const two = commitFile(repo, "two.txt", "2\n", "fix:\tsubject\twith tabs");
    const three = commitFile(repo, "three.txt", "3\n", "Third change\n\nA body that is not the subject.");
    assert.equal(await commitsBetween(repo, base, three), [
      { sha: one, subject: "First change" },
      { sha: two, subject: "fix:\tsubject\twith tabs" },
      { sha: three, subject: "Third change" },
    ]);
    assert.equal(await commitsBetween(repo, one, two), [{ sha: two, subject: "fix:\tsubject\twith tabs" }]);
    assert.equal(await commitsBetween(repo, three, three), []);
  }));

test("commitsBetween with no `from` lists every commit of `to`", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const base = git(repo, "rev-parse", "HEAD");
    const next = commitFile(repo, "b.txt", "b\n", "Second");
    assert.equal(await commitsBetween(repo, undefined, next), [
      { sha: base, subject: "Start the project" },
      { sha: next, subject: "Second" },
    ]);
  }));

test("commitsBetween from a commit that does not exist throws with git's words", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    try {
      await commitsBetween(repo, "0123456789012345678901234567890123456789", "HEAD");
      assert.unreachable("an unknown start commit cannot be listed from");
    } catch (error) {
      assert.instance(error, RobotArmyError);
      assert.match((error as Error).message, "git log");
    }
  }));

test("changedFiles lists added, modified, deleted and renamed files (both names) between two commits", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    writeFileSync(join(repo, "gone.txt"), "soon gone\n");
    git(repo, "add", "--all");
    const base = commitFile(repo, "old-name.txt", "moved\n", "Add a file to delete and one to rename");
    writeFileSync(join(repo, "README.md"), "changed\n");
    rmSync(join(repo, "gone.txt"));
    renameSync(join(repo, "old-name.txt"), join(repo, "new-name.txt"));
    git(repo, "add", "--all");
    const end = commitFile(repo, "src/new file.ts", "export {};\n", "Change, add, delete and rename");
    assert.equal(await changedFiles(repo, base, end), ["README.md", "gone.txt", "new-name.txt", "old-name.txt", "src/new file.ts"]);
    assert.equal(await changedFiles(repo, end, end), []);
  }));

test("changedFiles with no `from` lists every file of `to`", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const end = commitFile(repo, "lib/a.ts", "a\n", "Add a");
    assert.equal(await changedFiles(repo, undefined, end), ["README.md", "lib/a.ts"]);
  }));

test("changedFiles names files as they are called, not in git's quoted form", () =>
  withTempDir(async (dir) => {
    const repo = template.copy(dir);
    const base = git(repo, "rev-parse", "HEAD");
    const end = commitFile(repo, 'say "hi".txt', "hi\n", "A name git quotes");
    assert.equal(await changedFiles(repo, base, end), ['say "hi".txt']);
    assert.equal(await changedFiles(repo, undefined, end), ["README.md", 'say "hi".txt']);
  }));

test.run();
