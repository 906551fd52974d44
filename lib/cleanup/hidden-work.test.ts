/**
 * The attacks on cleanup that git cannot see (issue: "cleanup that deletes work git cannot
 * see"), each through the one removal path every command uses (removeCheckout): an open
 * episode's journal, files ignored by the owner's global ignore file, a nested repository in
 * an ignored folder, an edit to a skip-worktree file, a process working in the worktree. Each
 * kept the worktree only after the fix; build output the owner declared disposable, and
 * robot-army's own files, go with it and are listed.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitFile, git, originCloneTemplate, withTempDir } from "../testing/fixtures.ts";
import { waitFor } from "../testing/wait.ts";
import { branchName } from "../work-items/branch-name.ts";
import { createWorktree } from "../boundaries/worktrees.ts";
import type { Worktree } from "../boundaries/worktrees.ts";
import { isDisposable, processesIn } from "../boundaries/worktree-contents.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import { removeCheckout } from "./checkout.ts";
import type { CheckoutOptions, CheckoutRemoval } from "./checkout.ts";

const template = originCloneTemplate();
test.after(() => template.remove());

const DISPOSABLE = ["node_modules/", "dist/", "*.pyc"];

interface World {
  dir: string;
  clone: string;
  stateDir: string;
  store: Store;
  made: Worktree;
  /** Removes the worktree through the one removal path (its branch is unpushed, so only the worktree can go). */
  remove(options?: Partial<CheckoutOptions>): Promise<CheckoutRemoval>;
}

function withWorktree(fn: (w: World) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    const stateDir = join(dir, "state");
    const store = await openStore(stateDir);
    const copy = template.copy(dir);
    try {
      const made = await createWorktree({ repoPath: copy.clone, baseBranch: "main", root: join(dir, "worktrees"), repo: "octo/app", issue: 7, branch: branchName(7, "Fix it") });
      const remove = (options: Partial<CheckoutOptions> = {}) => removeCheckout(
        { store, effects: { worktrees: true, level: "local" }, stateDir, config: { cleanup: { disposable: DISPOSABLE } } },
        { repo: "octo/app", item: 7, repoPath: copy.clone, path: made.path, branch: made.branch, base: "main" },
        { session: { live: false }, ...options },
      );
      await fn({ dir, clone: copy.clone, stateDir, store, made, remove });
    } finally {
      store.close();
    }
  });
}

const keptFor = (removal: CheckoutRemoval) => (removal.worktree.status === "kept" ? `${removal.worktree.code}: ${removal.worktree.reason}` : removal.worktree.status);

test("an open episode keeps the worktree, forced or not: its journal is the evidence recovery needs", () =>
  withWorktree(async (w) => {
    const open = join(w.made.path, ".ai", "local", "state", "sessions-open");
    mkdirSync(open, { recursive: true });
    writeFileSync(join(open, "item-7.yaml"), "key: item-7\nstatus: busy\n");
    writeFileSync(join(w.made.path, ".ai", "local", "state", "ledger.jsonl"), '{"kind":"note"}\n');
    // robot-army excludes its journal from git, as it does in every worktree it makes: git reports the worktree clean.
    writeFileSync(join(w.clone, ".git", "info", "exclude"), "/.ai/local/\n");
    assert.is(git(w.made.path, "status", "--porcelain"), "");
    for (const force of [false, true]) {
      const removal = await w.remove({ force: { worktree: force } });
      assert.match(keptFor(removal), 'hidden_work: episode item-7 is still open in its journal (.ai/local/): end it, or have "robot-army recover episodes" record it (--older-than for one newer than [episodes] stranded_after), first', `force ${force}`);
      assert.ok(existsSync(join(open, "item-7.yaml")), "the journal is where it was");
    }
  }));

test("files the owner's global ignore file hides keep the worktree; only the owner's force deletes them, and they are listed", () =>
  withWorktree(async (w) => {
    const global = join(w.dir, "global-ignore");
    writeFileSync(global, "prod.env\nnotes/\n");
    git(w.clone, "config", "core.excludesFile", global);
    writeFileSync(join(w.made.path, "prod.env"), "DATABASE_PASSWORD=only-copy\n");
    mkdirSync(join(w.made.path, "notes"));
    writeFileSync(join(w.made.path, "notes", "plan.md"), "the only copy of the plan\n");
    assert.is(git(w.made.path, "status", "--porcelain"), "", "git reports the worktree clean");
    const kept = await w.remove();
    assert.match(keptFor(kept), "hidden_work: notes/ is ignored by git and not declared disposable ([cleanup] disposable); prod.env is ignored by git");
    assert.ok(existsSync(join(w.made.path, "prod.env")));
    const forced = await w.remove({ force: { worktree: true } });
    assert.equal(forced.worktree, { status: "removed", deleted: ["notes/", "prod.env"] });
    assert.not.ok(existsSync(w.made.path));
  }));

test("a nested repository in an ignored folder keeps the worktree, forced or not, even in a folder declared disposable", () =>
  withWorktree(async (w) => {
    writeFileSync(join(w.clone, ".git", "info", "exclude"), "scratch/\nnode_modules/\n");
    for (const folder of ["scratch/tool", "node_modules/pkg"]) {
      const nested = join(w.made.path, folder);
      mkdirSync(nested, { recursive: true });
      git(nested, "init", "-q");
      commitFile(nested, "work.txt", "commits that exist nowhere else\n", "Nested work");
    }
    for (const force of [false, true]) {
      const removal = await w.remove({ force: { worktree: force } });
      assert.match(keptFor(removal), "node_modules/pkg/ is a git repository of its own, inside an ignored folder: its commits are nowhere else");
      assert.match(keptFor(removal), "scratch/tool/ is a git repository of its own");
    }
    assert.ok(existsSync(join(w.made.path, "scratch", "tool", ".git")));
  }));

test("an edit to a skip-worktree or assume-unchanged file keeps the worktree, forced or not: git reports it clean", () =>
  withWorktree(async (w) => {
    git(w.made.path, "update-index", "--skip-worktree", "README.md");
    writeFileSync(join(w.made.path, "README.md"), "an edit git was told not to look at\n");
    assert.is(git(w.made.path, "status", "--porcelain"), "");
    for (const force of [false, true]) assert.match(keptFor(await w.remove({ force: { worktree: force } })), "README.md is edited but marked skip-worktree or assume-unchanged");
    // Put back as the index has it, the mark alone keeps nothing.
    writeFileSync(join(w.made.path, "README.md"), git(w.made.path, "show", "HEAD:README.md") + "\n");
    assert.is((await w.remove()).worktree.status, "removed");
  }));

test("a process working in the worktree keeps it, forced or not; once it ends the worktree goes", () =>
  withWorktree(async (w) => {
    const child = spawn("sleep", ["30"], { cwd: w.made.path, stdio: "ignore" });
    try {
      await waitFor("the process in the worktree", () => "processes" in processesIn(w.made.path) && (processesIn(w.made.path) as { processes: string[] }).processes.length > 0, 5_000);
      for (const force of [false, true]) assert.match(keptFor(await w.remove({ force: { worktree: force } })), `process ${child.pid} (sleep) works in it`);
    } finally {
      child.kill("SIGKILL");
    }
    await new Promise((resolve) => child.once("exit", resolve));
    assert.is((await w.remove()).worktree.status, "removed");
  }));

test("declared build output and robot-army's own files go with the worktree; the build output is listed", () =>
  withWorktree(async (w) => {
    writeFileSync(join(w.clone, ".git", "info", "exclude"), "/.ai/local/\n/.claude/settings.local.json\nnode_modules/\ndist/\n*.pyc\n");
    for (const file of ["node_modules/left-pad/index.js", "web/dist/app.js", "tool/cache.pyc", ".ai/local/state/ledger.jsonl", ".claude/settings.local.json"]) {
      mkdirSync(join(w.made.path, file, ".."), { recursive: true });
      writeFileSync(join(w.made.path, file), "x\n");
    }
    const removal = await w.remove();
    assert.equal(removal.worktree, { status: "removed", deleted: ["node_modules/", "tool/cache.pyc", "web/dist/"] }, "robot-army's own files go too, unlisted");
  }));

test("a disposable pattern is a folder name anywhere on the path, or a name pattern", () => {
  assert.ok(isDisposable("web/node_modules/", ["node_modules/"]));
  assert.ok(isDisposable("node_modules/x/y.js", ["node_modules/"]));
  assert.not.ok(isDisposable("node_modules.txt", ["node_modules/"]));
  assert.ok(isDisposable("a/b/c.pyc", ["*.pyc"]));
  assert.not.ok(isDisposable("prod.env", DISPOSABLE));
  assert.not.ok(isDisposable("notes/", DISPOSABLE));
});

test.run();
