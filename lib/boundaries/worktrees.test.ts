import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rejects } from "../testing/rejects.ts";
import { PreconditionError } from "../errors.ts";
import { commitFile, git, originCloneTemplate, withTempDir } from "../testing/fixtures.ts";
import { branchName } from "../work-items/branch-name.ts";
import { rememberSecret } from "../redact.ts";
import type { Worktree } from "./worktrees.ts";
import {
  createWorktree, existingWorktree, FetchError, PostCreateError, runPostCreate, worktreeDirty, worktreePath,
} from "./worktrees.ts";

/** A bare "origin", a seed repository that pushes to it, and the clone robot-army works from. */
interface World {
  dir: string;
  seed: string;
  origin: string;
  clone: string;
  root: string;
}

// Building the three repositories takes a dozen git calls; each test works in a copy of one set.
const template = originCloneTemplate();
test.after(() => template.remove());

function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  return withTempDir(async (dir) => {
    await fn({ ...template.copy(dir), root: join(dir, "worktrees") });
  });
}

function create(w: World, issue = 7, title = "Fix the login page"): Promise<Worktree> {
  return createWorktree({ repoPath: w.clone, baseBranch: "main", root: w.root, repo: "octo/app", issue, branch: branchName(issue, title) });
}


const branches = (repo: string) => git(repo, "branch", "--format=%(refname:short)").split("\n");

test("worktreePath is <root>/<owner>/<name>/issue-<n>, and refuses anything that could leave the root", () => {
  assert.is(worktreePath("/srv/wt", "octo/app.js", 12), "/srv/wt/octo/app.js/issue-12");
  for (const repo of ["octo", "octo/app/x", "../app", "octo/..", "octo/.", "/app", "octo/a b", "octo/$(x)", ""]) {
    assert.throws(() => worktreePath("/srv/wt", repo, 1), (e: unknown) => e instanceof TypeError, repo);
  }
  assert.throws(() => worktreePath("relative/root", "octo/app", 1), (e: unknown) => e instanceof TypeError);
  assert.throws(() => worktreePath("/srv/wt", "octo/app", 0), (e: unknown) => e instanceof RangeError);
});

test("createWorktree fetches first: the worktree starts at a commit that reached origin after the clone was made", () =>
  withWorld(async (w) => {
    const landed = commitFile(w.seed, "new.txt", "new\n", "Land on origin");
    git(w.seed, "push", "--quiet", w.origin, "main");
    assert.is.not(git(w.clone, "rev-parse", "origin/main"), landed);

    const made = await create(w);
    const path = join(w.root, "octo/app/issue-7");
    assert.equal(made, { path, branch: "robot-army/issue-7-fix-the-login-page", base: "main", head: landed });
    assert.is(git(path, "symbolic-ref", "--short", "HEAD"), made.branch);
    assert.is(git(path, "rev-parse", "--abbrev-ref", "@{upstream}"), "origin/main");
    assert.ok(existsSync(join(path, "new.txt")));
  }));

test("a fetch that fails is a FetchError naming the repository, and nothing is created", () =>
  withWorld(async (w) => {
    rmSync(w.origin, { recursive: true });
    const error = (await rejects(create(w), FetchError, `"octo/app"`, `"main"`)) as FetchError;
    assert.is(error.repo, "octo/app");
    assert.ok(error.stderrTail.length > 0);
    assert.not.ok(existsSync(join(w.root, "octo/app/issue-7")));
    assert.not.ok(branches(w.clone).includes("robot-army/issue-7-fix-the-login-page"));
  }));

test("a base branch origin does not have is a FetchError, not a guess from a local branch", () =>
  withWorld(async (w) => {
    git(w.clone, "branch", "develop");
    const spec = { repoPath: w.clone, baseBranch: "develop", root: w.root, repo: "octo/app", issue: 3, branch: "robot-army/issue-3" };
    await rejects(createWorktree(spec), FetchError, `"develop"`, "couldn't find remote ref");
  }));

test("a worktree that already exists is refused with a precondition error naming it; resume finds it instead", () =>
  withWorld(async (w) => {
    const made = await create(w);
    await rejects(create(w), PreconditionError, `"${made.path}"`, `"${made.branch}"`, "resume or restart");
    assert.equal(await existingWorktree({ repoPath: w.clone, path: made.path, branch: made.branch }), {
      path: made.path, branch: made.branch, head: made.head,
    });
  }));

test("a branch that already exists, or a folder in the way, is refused before anything is fetched or made", () =>
  withWorld(async (w) => {
    git(w.clone, "branch", "robot-army/issue-7-fix-the-login-page");
    await rejects(create(w), PreconditionError, `Branch "robot-army/issue-7-fix-the-login-page" already exists`);
    const blocked = join(w.root, "octo/app/issue-8");
    mkdirSync(blocked, { recursive: true });
    await rejects(create(w, 8), PreconditionError, `"${blocked}" already exists and is not a worktree`);
  }));

test("a branch name git would refuse, read as an option, or expand is refused before git is asked to create it", () =>
  withWorld(async (w) => {
    for (const branch of ["-x", "--force", "a..b", "@{-1}", "a b", "x.lock", "a:b"]) {
      const spec = { repoPath: w.clone, baseBranch: "main", root: w.root, repo: "octo/app", issue: 1, branch };
      await rejects(createWorktree(spec), TypeError, JSON.stringify(branch));
    }
    await rejects(createWorktree({ repoPath: w.clone, baseBranch: "--upload-pack=x", root: w.root, repo: "octo/app", issue: 1, branch: "ok" }), TypeError);
  }));

test("a hostile title makes a working branch and worktree, and nothing in it is executed", () =>
  withWorld(async (w) => {
    const marker = join(w.dir, "pwned");
    const title = `$(touch ${marker}) \`touch ${marker}\`; touch ${marker} && echo "x" > ${marker}\n..@{-1}~^:?*[\\ 🚀 ‮`;
    const made = await create(w, 99, title);
    assert.match(made.branch, /^robot-army\/issue-99-[a-z0-9-]+$/);
    assert.ok(branches(w.clone).includes(made.branch));
    assert.not.ok(existsSync(marker), "a title reached a shell");
  }));

test("existingWorktree is undefined for another branch, a plain folder, another repository's worktree, a deleted one and the main checkout", () =>
  withWorld(async (w) => {
    const made = await create(w);
    const ask = (path: string, branch = made.branch, repoPath = w.clone) => existingWorktree({ repoPath, path, branch });
    assert.ok(await ask(made.path));
    assert.is(await ask(made.path, "robot-army/issue-7-other"), undefined);
    assert.is(await ask(w.dir), undefined);
    assert.is(await ask(w.clone, "main"), undefined);
    const other = join(w.dir, "other-wt");
    git(w.seed, "worktree", "add", "--quiet", "-b", made.branch, other);
    assert.is(await ask(other), undefined, "a worktree of the seed repository is not one of the clone");
    rmSync(made.path, { recursive: true });
    assert.is(await ask(made.path), undefined, "a registered worktree whose folder is gone");
  }));

test("worktreeDirty: clean, modified, untracked; a folder outside git throws rather than answer clean", () =>
  withWorld(async (w) => {
    const { path } = await create(w);
    assert.is(await worktreeDirty(path), false);
    writeFileSync(join(path, "untracked.txt"), "u\n");
    assert.is(await worktreeDirty(path), true);
    rmSync(join(path, "untracked.txt"));
    writeFileSync(join(path, "README.md"), "changed\n");
    assert.is(await worktreeDirty(path), true);
    const plain = join(w.dir, "plain");
    mkdirSync(plain);
    await rejects(worktreeDirty(plain), Error, `"${plain}"`);
  }));

test("post-create steps run in order in the worktree, as programs with literal arguments", () =>
  withWorld(async (w) => {
    const { path } = await create(w);
    const hostile = "$(touch pwned); echo hi `touch pwned` > x";
    await runPostCreate(path, [
      ["sh", "-c", "echo one >> order.log"],
      ["cp", "-p", "README.md", "copied.md"], // -p is the real cp's; dax's own cp would refuse it
      ["touch", hostile],
      ["sh", "-c", "echo two >> order.log"],
    ]);
    assert.is(readFileSync(join(path, "order.log"), "utf8"), "one\ntwo\n");
    assert.ok(existsSync(join(path, "copied.md")));
    assert.ok(readdirSync(path).includes(hostile), "the argument arrived as one literal file name");
    assert.not.ok(existsSync(join(path, "pwned")));
  }));

test("a failing post-create step stops the rest and carries the step, its exit code and its stderr", () =>
  withWorld(async (w) => {
    const { path } = await create(w);
    const failing = ["sh", "-c", "echo preparing >&2; echo 'npm ERR! missing script' >&2; exit 3"];
    const error = (await rejects(
      runPostCreate(path, [["sh", "-c", "echo first >> order.log"], failing, ["sh", "-c", "echo never >> order.log"]]),
      PostCreateError, "step 2", "exit 3", "npm ERR! missing script", `"${path}"`,
    )) as PostCreateError;
    assert.equal(error.step, failing);
    assert.is(error.index, 1);
    assert.is(error.exitCode, 3);
    assert.is(error.stderrTail, "preparing\nnpm ERR! missing script");
    assert.is(readFileSync(join(path, "order.log"), "utf8"), "first\n");
  }));

test("a secret a failing post-create step prints is redacted in its error, the stderr it keeps included", () =>
  withWorld(async (w) => {
    const { path } = await create(w);
    rememberSecret("opaque-token-from-a-file");
    const token = `ghs_${"k".repeat(36)}`;
    const failing = ["sh", "-c", `echo "TOKEN=opaque-token-from-a-file" >&2; echo "fatal: https://x:${token}@host/r.git" >&2; exit 1`];
    const error = (await rejects(runPostCreate(path, [failing]), PostCreateError, "fatal: https://x:[redacted]@host/r.git")) as PostCreateError;
    assert.is(error.stderrTail, "TOKEN=[redacted]\nfatal: https://x:[redacted]@host/r.git");
    assert.not.match(error.message, token, "nor in the step's own words the message quotes");
  }));

test("a post-create program that does not exist, or runs out of time, is a PostCreateError too", () =>
  withWorld(async (w) => {
    const { path } = await create(w);
    const missing = (await rejects(runPostCreate(path, [["no-such-program-ra", "x"]]), PostCreateError, "exit 127")) as PostCreateError;
    assert.match(missing.stderrTail, "no-such-program-ra");
    await rejects(runPostCreate(path, [["sleep", "5"]], { timeoutMs: 200 }), PostCreateError, "ran out of time");
    await rejects(runPostCreate(path, [[]]), TypeError, "step 1 is empty");
  }));

test.run();
