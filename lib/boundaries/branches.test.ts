import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitFile, git, originCloneTemplate, withTempDir } from "../testing/fixtures.ts";
import { branchTip, bundlePath, deleteBranchAt, proveOnRemote, writeBundle } from "./branches.ts";

/** A bare "origin", a seed repository that pushes to it, and a clone of it on branch `topic` with one commit of its own. */
interface World {
  dir: string;
  seed: string;
  origin: string;
  clone: string;
  /** The commit `topic` has that origin does not. */
  tip: string;
}

const template = originCloneTemplate((t) => {
  git(t.clone, "checkout", "--quiet", "-b", "topic");
  commitFile(t.clone, "work.txt", "work\n", "Work on the topic");
  git(t.clone, "checkout", "--quiet", "main");
});
test.after(() => template.remove());

function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    const copied = template.copy(dir);
    await fn({ ...copied, tip: git(copied.clone, "rev-parse", "topic") });
  });
}

const ask = (w: World, pullNumbers?: number[], tip = w.tip) => proveOnRemote(w.clone, { branch: "topic", tip, base: "main", pullNumbers });
const proven = (w: World, how: string) => ({ proven: true, tip: w.tip, how: `every commit of it is ${how}, asked live` });
const hasCommit = (repo: string, sha: string) => spawnSync("git", ["cat-file", "-e", `${sha}^{commit}`], { cwd: repo }).status === 0;

test("proveOnRemote weighs origin's base first, then its branch of that name, then the merged pull requests' heads, then any branch or tag", () =>
  withWorld(async (w) => {
    const unpushed = { proven: false, tip: w.tip, reason: "1 commit of it is on no branch, tag or merged pull request of origin (asked live)" };
    assert.equal(await ask(w, [5]), unpushed);
    git(w.clone, "push", "--quiet", "origin", "topic:refs/pull/5/head");
    assert.equal(await ask(w), unpushed, "a pull request's head proves only when the pull request is named as merged");
    assert.equal(await ask(w, [4, 5]), proven(w, "in origin's refs/pull/5/head (pull request #5)"));
    git(w.clone, "push", "--quiet", "origin", "topic:refs/heads/topic");
    assert.equal(await ask(w, [5]), proven(w, "in origin's branch topic"));
    git(w.clone, "push", "--quiet", "origin", "topic:refs/heads/main");
    assert.equal(await ask(w, [5]), proven(w, "in origin's main"));
  }));

test("a tip held only by another of origin's branches is proven by the last look; a tag on it too", () =>
  withWorld(async (w) => {
    git(w.clone, "push", "--quiet", "origin", "topic:refs/heads/elsewhere");
    assert.equal(await ask(w, [5]), proven(w, "on a branch or tag of origin"));
    git(w.origin, "update-ref", "-d", "refs/heads/elsewhere");
    git(w.clone, "tag", "v1", "topic");
    git(w.clone, "push", "--quiet", "origin", "v1");
    assert.equal(await ask(w), proven(w, "on a branch or tag of origin"));
  }));

test("a merged pull request's head the clone never had is fetched from origin to be weighed", () =>
  withWorld(async (w) => {
    // The worker pushed more after the clone last saw the branch: only origin has the pull request's head.
    git(w.seed, "fetch", "--quiet", w.clone, "topic");
    git(w.seed, "checkout", "--quiet", "-b", "later", "FETCH_HEAD");
    const head = commitFile(w.seed, "more.txt", "more\n", "More work, pushed from elsewhere");
    git(w.seed, "push", "--quiet", w.origin, "later:refs/pull/9/head");
    assert.not.ok(hasCommit(w.clone, head));
    assert.equal(await ask(w, [9]), proven(w, "in origin's refs/pull/9/head (pull request #9)"));
    assert.ok(hasCommit(w.clone, head));
  }));

test("when git cannot say whether a ref holds the tip, it is unproven, never safe", () =>
  withWorld(async (w) => {
    const missing = "0123456789abcdef0123456789abcdef01234567";
    const answer = await ask(w, [], missing);
    assert.is(answer.proven, false);
    assert.match((answer as { reason: string }).reason, /^git cannot say whether refs\/heads\/main holds it: /);
  }));

test("when origin cannot be asked, nothing is proven, even with a remote-tracking ref holding the tip", () =>
  withWorld(async (w) => {
    git(w.clone, "update-ref", "refs/remotes/origin/topic", w.tip);
    rmSync(w.origin, { recursive: true });
    const answer = await ask(w);
    assert.is(answer.proven, false);
    assert.match((answer as { reason: string }).reason, /^origin cannot be asked whether its commits are there: /);
  }));

test("deleteBranchAt deletes the branch at the proven tip and takes its config section with it, and no other", () =>
  withWorld(async (w) => {
    git(w.clone, "branch", "other", "topic");
    for (const name of ["topic", "other"]) {
      git(w.clone, "config", `branch.${name}.remote`, "origin");
      git(w.clone, "config", `branch.${name}.merge`, `refs/heads/${name}`);
    }
    assert.equal(await deleteBranchAt(w.clone, "topic", w.tip), { status: "deleted" });
    assert.is(await branchTip(w.clone, "topic"), undefined);
    assert.is(git(w.clone, "config", "--get-regexp", "^branch\\.").split("\n").filter((l) => l.startsWith("branch.topic.")).length, 0);
    assert.is(git(w.clone, "config", "branch.other.merge"), "refs/heads/other");
    assert.equal(await deleteBranchAt(w.clone, "topic", w.tip), { status: "absent" });
  }));

test("deleteBranchAt keeps a branch that moved past the proven tip", () =>
  withWorld(async (w) => {
    git(w.clone, "checkout", "--quiet", "topic");
    const landed = commitFile(w.clone, "late.txt", "late\n", "Landed after the proof");
    git(w.clone, "checkout", "--quiet", "main");
    assert.equal(await deleteBranchAt(w.clone, "topic", w.tip), { status: "kept", reason: `it moved to ${landed.slice(0, 12)} after ${w.tip.slice(0, 12)} was proven` });
    assert.is(await branchTip(w.clone, "topic"), landed);
  }));

test("deleteBranchAt keeps a branch checked out in a worktree, as git branch -d would", () =>
  withWorld(async (w) => {
    const elsewhere = join(w.dir, "elsewhere");
    git(w.clone, "worktree", "add", "--quiet", elsewhere, "topic");
    assert.equal(await deleteBranchAt(w.clone, "topic", w.tip), { status: "kept", reason: `it is checked out at "${elsewhere}"` });
    assert.is(await branchTip(w.clone, "topic"), w.tip);
    git(w.clone, "worktree", "remove", elsewhere);
    git(w.clone, "checkout", "--quiet", "topic");
    assert.equal(await deleteBranchAt(w.clone, "topic", w.tip), { status: "kept", reason: `it is checked out at "${w.clone}"` });
    assert.is(git(w.clone, "rev-parse", "HEAD"), w.tip);
  }));

test("bundlePath is <state dir>/bundles/<owner>/<name>/<branch>.bundle, and a free name beside one already there", () =>
  withTempDir(async (dir) => {
    const tip = "0123456789abcdef0123456789abcdef01234567";
    const folder = join(dir, "bundles", "octo", "app", "robot-army");
    const plain = join(folder, "issue-7-fix.bundle");
    assert.is(bundlePath(dir, "octo/app", "robot-army/issue-7-fix", tip), plain);
    mkdirSync(folder, { recursive: true });
    writeFileSync(plain, "");
    const tipped = join(folder, "issue-7-fix.0123456789ab.bundle");
    assert.is(bundlePath(dir, "octo/app", "robot-army/issue-7-fix", tip), tipped);
    // The same branch restored and deleted again at the same tip: a third file, not a refusal.
    writeFileSync(tipped, "");
    assert.is(bundlePath(dir, "octo/app", "robot-army/issue-7-fix", tip), join(folder, "issue-7-fix.0123456789ab.2.bundle"));
  }));

test("writeBundle never overwrites a file already at its path", () =>
  withWorld(async (w) => {
    const file = join(w.dir, "state", "topic.bundle");
    mkdirSync(join(w.dir, "state"));
    writeFileSync(file, "earlier\n");
    let error: unknown;
    try {
      await writeBundle(w.clone, { branch: "topic", tip: w.tip, base: "main", file });
    } catch (caught) {
      error = caught;
    }
    assert.match(String(error), `"${file}" is already there and is not overwritten`);
    assert.is(readFileSync(file, "utf8"), "earlier\n");
  }));

test.run();
