import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitFile, git, originCloneTemplate, withTempDir } from "../testing/fixtures.ts";
import { branchName } from "../work-items/branch-name.ts";
import { createWorktree } from "../boundaries/worktrees.ts";
import type { Worktree } from "../boundaries/worktrees.ts";
import { queryAudit } from "../store/audit.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/open.ts";
import { removeCheckout } from "./checkout.ts";
import type { CheckoutDeps, CheckoutOptions, CheckoutRemoval, CheckoutTarget } from "./checkout.ts";

/** A bare "origin", a seed repository that pushes to it, the clone robot-army works from, and a state dir with its store. */
interface World {
  dir: string;
  seed: string;
  origin: string;
  clone: string;
  root: string;
  stateDir: string;
  store: Store;
}

// Building the three repositories takes a dozen git calls; each test works in a copy of one set.
const template = originCloneTemplate();
test.after(() => template.remove());

function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    const stateDir = join(dir, "state");
    const store = await openStore(stateDir);
    const w = { ...template.copy(dir), root: join(dir, "worktrees"), stateDir, store };
    try {
      await fn(w);
    } finally {
      store.close();
    }
  });
}

function create(w: World, issue = 7, title = "Fix the login page"): Promise<Worktree> {
  return createWorktree({ repoPath: w.clone, baseBranch: "main", root: w.root, repo: "octo/app", issue, branch: branchName(issue, title) });
}

const LOCAL: CheckoutDeps["effects"] = { worktrees: true, level: "local" };
const NO_SESSION: CheckoutOptions = { session: { live: false } };

/** Removes `made` (its path and branch, item 7 of octo/app) through the one removal path. */
function remove(w: World, made: { path: string; branch: string }, options: CheckoutOptions = NO_SESSION, extra: Partial<CheckoutTarget> = {}, effects = LOCAL): Promise<CheckoutRemoval> {
  const target: CheckoutTarget = { repo: "octo/app", item: 7, repoPath: w.clone, path: made.path, branch: made.branch, base: "main", ...extra };
  return removeCheckout({ store: w.store, effects, stateDir: w.stateDir }, target, options);
}

const branches = (repo: string) => git(repo, "branch", "--format=%(refname:short)").split("\n");
const tipOf = (repo: string, branch: string) => git(repo, "rev-parse", `refs/heads/${branch}`);
const unpushed = "unproven: 1 commit of it is on no branch, tag or merged pull request of origin (asked live)";
const inMain = "every commit of it is in origin's main, asked live";
const onOrigin = "every commit of it is on a branch or tag of origin, asked live";
const restoreBranch = (w: World, branch: string, tip: string) => `git -C ${w.clone} branch ${branch} ${tip}`;

test("removal is refused while a session is live or its liveness is unknown, even with force; nothing is audited", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const before = queryAudit(w.store).length;
    for (const live of [true, "unknown"] as const) {
      for (const force of [false, true]) {
        const why = live === true ? "a live session works in it" : "whether a session works in it is unknown";
        const report = await remove(w, made, { session: { live, why }, force: { worktree: force, branch: force } });
        assert.equal(report, { simulated: false, worktree: { status: "kept", code: "session", reason: why }, branch: { status: "not_attempted" } }, `${live} ${force}`);
      }
    }
    assert.ok(existsSync(made.path));
    assert.ok(branches(w.clone).includes(made.branch));
    assert.is(queryAudit(w.store).length, before, "a refusal by the session guard touches nothing, so it audits no effect");
  }));

test("git's refusal over uncommitted or untracked work stands and is reported in git's words; force removes", () =>
  withWorld(async (w) => {
    const made = await create(w);
    writeFileSync(join(made.path, "README.md"), "uncommitted\n");
    let report = await remove(w, made);
    assert.is(report.worktree.status, "kept");
    assert.is((report.worktree as { code: string }).code, "git_refused");
    assert.match((report.worktree as { reason: string }).reason, "contains modified or untracked files");
    assert.equal(report.branch, { status: "not_attempted" });
    git(made.path, "checkout", "--", "README.md");
    writeFileSync(join(made.path, "notes.txt"), "untracked\n");
    report = await remove(w, made);
    assert.is((report.worktree as { code: string }).code, "git_refused");
    assert.equal(report.branch, { status: "not_attempted" });
    assert.ok(existsSync(join(made.path, "notes.txt")));

    report = await remove(w, made, { ...NO_SESSION, force: { worktree: true } });
    assert.equal(report, {
      simulated: false, worktree: { status: "removed" }, branch: { status: "deleted" },
      proof: inMain, tip: made.head, restore: restoreBranch(w, made.branch, made.head),
    });
    assert.not.ok(existsSync(made.path));
    assert.not.ok(branches(w.clone).includes(made.branch));
  }));

test("a branch with a commit origin does not have is kept after its clean worktree is removed; force deletes it", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const tip = commitFile(made.path, "work.txt", "work\n", "Unmerged work");
    const first = await remove(w, made);
    assert.equal(first, { simulated: false, worktree: { status: "removed" }, branch: { status: "kept", reason: unpushed }, tip });
    assert.ok(branches(w.clone).includes(made.branch));
    const forced = await remove(w, made, { ...NO_SESSION, force: { branch: true } });
    assert.equal(forced.worktree, { status: "absent" });
    assert.equal(forced.branch, { status: "deleted" });
    assert.is(forced.proof, `forced by the owner (${unpushed.replace("unproven: ", "")})`);
    assert.ok(forced.bundle && existsSync(forced.bundle), "a forced deletion still writes its bundle first");
    assert.not.ok(branches(w.clone).includes(made.branch));
  }));

test("a clean, merged worktree and branch are removed; a folder deleted by hand is reported absent, not removed", () =>
  withWorld(async (w) => {
    const one = await create(w, 1, "One");
    assert.equal(await remove(w, one), {
      simulated: false, worktree: { status: "removed" }, branch: { status: "deleted" }, proof: inMain, tip: one.head, restore: restoreBranch(w, one.branch, one.head),
    });
    const two = await create(w, 2, "Two");
    rmSync(two.path, { recursive: true });
    assert.equal(await remove(w, two), {
      simulated: false, worktree: { status: "absent" }, branch: { status: "deleted" }, proof: inMain, tip: two.head, restore: restoreBranch(w, two.branch, two.head),
    });
    assert.not.match(git(w.clone, "worktree", "list", "--porcelain"), two.path);
  }));

test("removal keeps a folder that is not that worktree: a plain folder, another branch, a locked worktree under force", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const force = { ...NO_SESSION, force: { worktree: true, branch: true } };
    const plain = join(w.dir, "plain");
    mkdirSync(plain);
    const notOurs = await remove(w, { path: plain, branch: made.branch }, force);
    assert.is((notOurs.worktree as { code: string }).code, "not_a_worktree");
    assert.match((notOurs.worktree as { reason: string }).reason, "is not a worktree of");
    assert.equal(notOurs.branch, { status: "not_attempted" });
    assert.ok(existsSync(plain));
    const wrong = await remove(w, { path: made.path, branch: "robot-army/issue-8" }, force);
    assert.is((wrong.worktree as { code: string }).code, "not_a_worktree");
    assert.match((wrong.worktree as { reason: string }).reason, `it is on branch "${made.branch}"`);
    git(w.clone, "worktree", "lock", made.path);
    const locked = await remove(w, made, force);
    assert.is((locked.worktree as { code: string }).code, "git_refused");
    assert.match((locked.worktree as { reason: string }).reason, "locked");
    assert.equal(locked.branch, { status: "not_attempted" });
    assert.ok(existsSync(made.path));
    assert.ok(branches(w.clone).includes(made.branch));
  }));

test("a branch is deleted once origin has every commit of it, under any name, asked live", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const tip = commitFile(made.path, "work.txt", "work\n", "Pushed work");
    // Pushed under another name, and never fetched back: only origin itself can say it is there.
    git(made.path, "push", "--quiet", "origin", `HEAD:refs/heads/elsewhere`);
    const report = await remove(w, made);
    assert.equal([report.worktree, report.branch, report.proof, report.tip], [{ status: "removed" }, { status: "deleted" }, onOrigin, tip]);
    assert.not.ok(branches(w.clone).includes(made.branch));
  }));

test("a remote-tracking ref left by an earlier push proves nothing: once origin lost the branch, it is kept", () =>
  withWorld(async (w) => {
    const made = await create(w);
    commitFile(made.path, "work.txt", "work\n", "Pushed, then deleted on origin");
    git(made.path, "push", "--quiet", "-u", "origin", "HEAD");
    git(w.seed, "push", "--quiet", w.origin, "--delete", made.branch);
    assert.ok(git(w.clone, "branch", "-r").includes(`origin/${made.branch}`), "the clone still has its remote-tracking ref");
    const report = await remove(w, made);
    assert.equal(report.branch, { status: "kept", reason: unpushed });
    assert.ok(branches(w.clone).includes(made.branch));
  }));

test("when origin cannot be asked, the branch is kept and says why", () =>
  withWorld(async (w) => {
    const made = await create(w);
    rmSync(w.origin, { recursive: true });
    const report = await remove(w, made);
    assert.is(report.worktree.status, "removed");
    assert.is(report.branch.status, "kept");
    assert.match((report.branch as { reason: string }).reason, /^unproven: origin cannot be asked whether its commits are there: /);
    assert.ok(branches(w.clone).includes(made.branch));
    assert.not.ok(existsSync(join(w.stateDir, "bundles")), "no bundle is written for a branch that is kept");
  }));

test("origin's tips are fetched and weighed, one the clone cannot get is passed over; an annotated tag holding the commits proves them", () =>
  withWorld(async (w) => {
    const made = await create(w);
    commitFile(w.seed, "later.txt", "later\n", "On origin only");
    git(w.seed, "push", "--quiet", w.origin, "main");
    // A tag on a commit no branch holds: a fetch does not bring it, so the clone never has it.
    git(w.seed, "checkout", "--quiet", "-b", "side");
    commitFile(w.seed, "side.txt", "side\n", "Only under a tag");
    git(w.seed, "tag", "-a", "-m", "side", "side-tag");
    git(w.seed, "push", "--quiet", w.origin, "side-tag");
    commitFile(made.path, "work.txt", "work\n", "Tagged work");
    git(made.path, "tag", "-a", "-m", "release", "v1");
    assert.equal((await remove(w, made)).branch, { status: "kept", reason: unpushed });
    git(w.clone, "push", "--quiet", "origin", "v1");
    const report = await remove(w, made);
    assert.equal([report.worktree, report.branch, report.proof], [{ status: "absent" }, { status: "deleted" }, onOrigin]);
  }));

test("a removal that deletes a branch audits an intent and an outcome, under one action id, for each of its three effects", () =>
  withWorld(async (w) => {
    const made = await create(w);
    commitFile(made.path, "work.txt", "work\n", "Pushed work");
    git(made.path, "push", "--quiet", "origin", "HEAD");
    const report = await remove(w, made);
    assert.equal(report.branch, { status: "deleted" });
    const records = queryAudit(w.store).filter((r) => r.phase !== "fact");
    assert.equal(records.map((r) => `${r.kind} ${r.phase}`), [
      "worktree.remove intent", "worktree.remove outcome", "bundle.write intent", "bundle.write outcome", "branch.delete intent", "branch.delete outcome",
    ]);
    for (let i = 0; i < records.length; i += 2) {
      const [intent, outcome] = [records[i]!, records[i + 1]!];
      assert.ok(intent.actionId, intent.kind);
      assert.is(outcome.actionId, intent.actionId, intent.kind);
      assert.equal([intent.repo, intent.item, intent.simulated], ["octo/app", 7, false], intent.kind);
      assert.is(outcome.body.ok, true, intent.kind);
    }
    assert.equal(records[5]!.body.branch, { status: "deleted" });
    assert.is(records[4]!.body.tip, report.tip);
    assert.is(records[4]!.body.bundle, report.bundle);
    assert.is(records[3]!.body.file, report.bundle);
  }));

test("a squash merge proves its branch only through the merged pull request's refs/pull/<n>/head, asked live", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const tip = commitFile(made.path, "work.txt", "work\n", "Work squashed on merge");
    git(made.path, "push", "--quiet", "-u", "origin", "HEAD");
    // What GitHub does on a squash merge: the pull request's head kept, the work squashed onto main, the branch deleted.
    git(w.origin, "update-ref", "refs/pull/3/head", tip);
    const squash = git(w.origin, "commit-tree", `${tip}^{tree}`, "-p", "main", "-m", "Fix the login page (#3)");
    git(w.origin, "update-ref", "refs/heads/main", squash);
    git(w.origin, "update-ref", "-d", `refs/heads/${made.branch}`);
    assert.equal(git(w.origin, "rev-list", "--parents", "-n1", "main").split(" ").length, 2, "the squash has main as its only parent");

    const unaided = await remove(w, made);
    assert.equal(unaided.branch, { status: "kept", reason: unpushed });
    const merged = await remove(w, made, NO_SESSION, { pullNumbers: [3] });
    assert.equal(merged.branch, { status: "deleted" });
    assert.is(merged.proof, "every commit of it is in origin's refs/pull/3/head (pull request #3), asked live");
    assert.is(merged.tip, tip);
    assert.not.ok(branches(w.clone).includes(made.branch));
  }));

test("the bundle is written (0600) before the deletion, and its restore command brings the branch back at the same tip", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const tip = commitFile(made.path, "work.txt", "work\n", "Pushed work");
    git(made.path, "push", "--quiet", "origin", "HEAD");
    const report = await remove(w, made);
    const file = join(w.stateDir, "bundles", "octo", "app", `${made.branch}.bundle`);
    assert.equal([report.branch, report.bundle], [{ status: "deleted" }, file]);
    assert.is(statSync(file).mode & 0o777, 0o600);
    const records = queryAudit(w.store);
    const written = records.find((r) => r.kind === "bundle.write" && r.phase === "outcome")!;
    const deleting = records.find((r) => r.kind === "branch.delete" && r.phase === "intent")!;
    assert.ok(written.id < deleting.id, "the bundle's outcome is written before the deletion's intent");
    assert.not.ok(branches(w.clone).includes(made.branch));

    const restored = spawnSync("sh", ["-c", report.restore!], { encoding: "utf8" });
    assert.is(restored.status, 0, restored.stderr);
    assert.is(tipOf(w.clone, made.branch), tip);
    assert.equal(git(w.clone, "for-each-ref", "refs/robot-army/"), "", "the bundle's pin ref is not left behind");
  }));

test("a second bundle for the same branch name does not overwrite the first", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const tip = commitFile(made.path, "work.txt", "work\n", "First work");
    git(made.path, "push", "--quiet", "origin", `HEAD:refs/heads/first`);
    const first = await remove(w, made);
    const firstBytes = readFileSync(first.bundle!);
    // The same branch name made again, for new work.
    git(w.clone, "worktree", "add", "--quiet", "-b", made.branch, made.path, "origin/main");
    const again = commitFile(made.path, "work.txt", "again\n", "Second work");
    git(made.path, "push", "--quiet", "origin", `HEAD:refs/heads/second`);
    const second = await remove(w, made);
    assert.equal(second.branch, { status: "deleted" });
    assert.is(second.bundle, join(w.stateDir, "bundles", "octo", "app", `${made.branch}.${again.slice(0, 12)}.bundle`));
    assert.equal(readFileSync(first.bundle!), firstBytes);
    assert.is.not(tip, again);
    assert.is(spawnSync("sh", ["-c", first.restore!]).status, 0);
    assert.is(tipOf(w.clone, made.branch), tip);
  }));

test("a branch restored from its bundle and deleted again at the same tip, twice, gets a third bundle, not a refusal", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const tip = commitFile(made.path, "work.txt", "work\n", "Pushed work");
    git(made.path, "push", "--quiet", "origin", "HEAD:refs/heads/elsewhere");
    const folder = join(w.stateDir, "bundles", "octo", "app");
    const files = [`${made.branch}.bundle`, `${made.branch}.${tip.slice(0, 12)}.bundle`, `${made.branch}.${tip.slice(0, 12)}.2.bundle`];
    for (const file of files) {
      const report = await remove(w, made);
      assert.equal([report.branch, report.bundle], [{ status: "deleted" }, join(folder, file)], file);
      assert.is(spawnSync("sh", ["-c", report.restore!]).status, 0, file);
      assert.is(tipOf(w.clone, made.branch), tip, file);
    }
  }));

test("a bundle that cannot be written keeps the branch, its failure audited, and no deletion is attempted", () =>
  withWorld(async (w) => {
    const made = await create(w);
    commitFile(made.path, "work.txt", "work\n", "Pushed work");
    git(made.path, "push", "--quiet", "origin", "HEAD");
    writeFileSync(join(w.stateDir, "bundles"), "a file where the bundles' folder goes\n");
    const report = await remove(w, made);
    assert.is(report.worktree.status, "removed");
    assert.is(report.branch.status, "kept");
    assert.match((report.branch as { reason: string }).reason, /^its bundle could not be written, so it was not deleted: /);
    assert.ok(branches(w.clone).includes(made.branch));
    const records = queryAudit(w.store).filter((r) => r.phase !== "fact");
    assert.equal(records.map((r) => `${r.kind} ${r.phase}`), ["worktree.remove intent", "worktree.remove outcome", "bundle.write intent", "bundle.write outcome"]);
    assert.is(records[3]!.body.ok, false);
  }));

test("a branch checked out in the clone's own checkout is kept, though its worktree went and origin has it all", () =>
  withWorld(async (w) => {
    const made = await create(w);
    rmSync(made.path, { recursive: true });
    git(w.clone, "worktree", "prune");
    git(w.clone, "checkout", "--quiet", made.branch);
    const report = await remove(w, made);
    assert.equal(report.worktree, { status: "absent" });
    assert.equal(report.branch, { status: "kept", reason: `it is checked out at "${w.clone}"` });
    assert.is(git(w.clone, "rev-parse", "HEAD"), made.head);
    assert.is(git(w.clone, "symbolic-ref", "HEAD"), `refs/heads/${made.branch}`);
  }));

test("a branch with no commit of its own gets no bundle file, and its restore command is git branch at its tip", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const report = await remove(w, made);
    assert.equal(report.branch, { status: "deleted" });
    assert.is(report.bundle, undefined);
    assert.is(report.restore, `git -C ${w.clone} branch ${made.branch} ${made.head}`);
    assert.not.ok(existsSync(join(w.stateDir, "bundles")));
    assert.is(spawnSync("sh", ["-c", report.restore!]).status, 0);
    assert.is(tipOf(w.clone, made.branch), made.head);
  }));

test("the deletion is pinned to the proven tip: a commit landing on the branch after the proof keeps it", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const tip = commitFile(made.path, "work.txt", "work\n", "Pushed work");
    git(made.path, "push", "--quiet", "origin", "HEAD");
    // A commit lands on the branch between the proof and the deletion: the moment the bundle pins the proven tip.
    const hooks = join(w.clone, ".git", "hooks");
    mkdirSync(hooks, { recursive: true });
    writeFileSync(join(hooks, "reference-transaction"), `#!/bin/sh
[ "$1" = committed ] || exit 0
while read old new ref; do
  case "$ref" in refs/robot-army/bundle/*) ;; *) continue ;; esac
  [ "$old" = 0000000000000000000000000000000000000000 ] || continue
  landed=$(GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t git commit-tree "$new^{tree}" -p "$new" -m "Landed late")
  git update-ref "refs/heads/\${ref#refs/robot-army/bundle/}" "$landed"
done
`);
    chmodSync(join(hooks, "reference-transaction"), 0o755);
    const report = await remove(w, made);
    assert.is(report.tip, tip);
    const landed = tipOf(w.clone, made.branch);
    assert.is.not(landed, tip);
    assert.equal(report.branch, { status: "kept", reason: `it moved to ${landed.slice(0, 12)} after ${tip.slice(0, 12)} was proven` });
    assert.is(git(w.clone, "rev-parse", `${landed}^`), tip);
  }));

test("below local nothing is touched: both halves are simulated, and a real directory on disk is a survivor, never a removal", () =>
  withWorld(async (w) => {
    const plan: CheckoutDeps["effects"] = { worktrees: false, level: "plan" };
    const made = await create(w);
    const force = { ...NO_SESSION, force: { worktree: true, branch: true } };
    const survived = await remove(w, made, force, {}, plan);
    assert.is(survived.simulated, true);
    assert.is(survived.worktree.status, "kept");
    assert.is((survived.worktree as { code: string }).code, "directory_survived");
    assert.match((survived.worktree as { reason: string }).reason, "effect level plan");
    assert.equal(survived.branch, { status: "not_attempted" });
    assert.ok(existsSync(made.path));
    assert.ok(branches(w.clone).includes(made.branch));

    rmSync(made.path, { recursive: true });
    const listed = git(w.clone, "worktree", "list", "--porcelain");
    const simulated = await remove(w, made, force, {}, plan);
    assert.equal(simulated, { simulated: true, worktree: { status: "simulated" }, branch: { status: "simulated" } });
    assert.is(git(w.clone, "worktree", "list", "--porcelain"), listed, "git's record of the worktree is not pruned");
    assert.is(tipOf(w.clone, made.branch), made.head);
    const records = queryAudit(w.store).filter((r) => r.phase !== "fact");
    assert.equal(records.map((r) => `${r.kind} ${r.phase} ${r.simulated}`), [
      "worktree.remove intent true", "worktree.remove outcome true", "worktree.remove intent true", "worktree.remove outcome true",
    ]);
  }));

test.run();
