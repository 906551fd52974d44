// The repository's instruction files, read from real git repositories: a bare origin, a clone
// that pushes to it, and worktrees made from origin/main as dispatch makes them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitFile, git, originCloneTemplate, withTempDir } from "../testing/fixtures.ts";
import type { OriginClone } from "../testing/fixtures.ts";
import { composePrompt } from "./prompt.ts";
import { INSTRUCTIONS_MAX_BYTES, cloneInstructions, readRepoInstructions, startingCommit } from "./repo-instructions.ts";
import type { RepoInstructions } from "./repo-instructions.ts";

const template = originCloneTemplate();
test.after(() => template.remove());

const CLAUDE = ".claude/robot-army.md";
const NEUTRAL = ".robot-army/instructions.md";
const BRANCH = "robot-army/issue-7-fix-it";

/** Commits files on the clone's main and pushes them, so origin/main holds them. */
function onBase(t: OriginClone, files: Record<string, string>): string {
  for (const [path, content] of Object.entries(files)) commitFile(t.clone, path, content, `Add ${path}`);
  git(t.clone, "push", "--quiet", "origin", "main");
  return git(t.clone, "rev-parse", "refs/remotes/origin/main");
}

/** A worktree on a new branch from origin/main, as dispatch makes one. */
function worktree(t: OriginClone): string {
  const path = join(t.dir, "trees", "issue-7");
  git(t.clone, "worktree", "add", "--quiet", "--track", "-b", BRANCH, path, "refs/remotes/origin/main");
  return path;
}

/** The instructions a dispatch reads in a worktree: where its branch left origin/main. */
async function inWorktree(path: string): Promise<RepoInstructions> {
  return await readRepoInstructions(path, "main", await startingCommit(path, "HEAD", "main"));
}

const paths = (instructions: RepoInstructions) => (instructions.files ?? []).map((file) => file.path);

test("a repository with neither file gives none", () =>
  withTempDir(async (dir) => {
    const t = template.copy(dir);
    const path = worktree(t);
    const read = await inWorktree(path);
    assert.equal(read, { base: "main", commit: git(path, "rev-parse", "HEAD"), files: [] });
  }));

test("each file alone is read as committed on the base branch", () =>
  withTempDir(async (dir) => {
    const t = template.copy(dir);
    const commit = onBase(t, { [CLAUDE]: "Run npm test before you commit.\n" });
    const path = worktree(t);
    assert.equal(await inWorktree(path), {
      base: "main", commit, files: [{ path: CLAUDE, text: "Run npm test before you commit.\n", bytes: 32, truncated: false }],
    });
    git(path, "rm", "--quiet", "--", CLAUDE);
    git(path, "commit", "--quiet", "-m", "Drop it on the branch");
    commitFile(t.clone, NEUTRAL, "Write in English.\n", "Swap the files");
    git(t.clone, "rm", "--quiet", "--", CLAUDE);
    git(t.clone, "commit", "--quiet", "-m", "Only the neutral file");
    git(t.clone, "push", "--quiet", "origin", "main");
    const only = await readRepoInstructions(t.clone, "main", git(t.clone, "rev-parse", "refs/remotes/origin/main"));
    assert.equal(paths(only), [NEUTRAL]);
    assert.is(only.files![0].text, "Write in English.\n");
  }));

test("both files are read, .claude/robot-army.md first whichever was committed first, and both reach the prompt", () =>
  withTempDir(async (dir) => {
    const t = template.copy(dir);
    onBase(t, { [NEUTRAL]: "Neutral words.\n" });
    const commit = onBase(t, { [CLAUDE]: "Claude words.\n" });
    const read = await inWorktree(worktree(t));
    assert.equal(paths(read), [CLAUDE, NEUTRAL]);
    const prompt = composePrompt({
      item: 1, repo: "demo/widgets", issue: 7, title: "Fix it", body: "", branch: BRANCH, worktree: "/w", episodeKey: "item-1",
      words: { editedBy: [], held: null }, level: "live", instructions: read,
    });
    assert.match(prompt, `## The repository's own instructions: ${CLAUDE}\n\nThese are demo/widgets's own instructions to its workers, from ${CLAUDE} as committed on its\nbase branch main (commit ${commit}).`);
    assert.ok(prompt.indexOf("Claude words.") < prompt.indexOf(`## The repository's own instructions: ${NEUTRAL}`));
    assert.ok(prompt.endsWith("Neutral words.\n"));
  }));

test("an oversized file is cut at 16 KiB, never inside a character, and says how big it was", () =>
  withTempDir(async (dir) => {
    const t = template.copy(dir);
    // The three-byte "€" straddles the 16 KiB mark.
    const big = "a".repeat(INSTRUCTIONS_MAX_BYTES - 1) + "€" + "b".repeat(5000);
    onBase(t, { [NEUTRAL]: big });
    const [file] = (await inWorktree(worktree(t))).files!;
    assert.is(file.truncated, true);
    assert.is(file.bytes, Buffer.byteLength(big));
    assert.is(file.text, "a".repeat(INSTRUCTIONS_MAX_BYTES - 1), "the cut character is left out whole");
    assert.ok(Buffer.byteLength(file.text) <= INSTRUCTIONS_MAX_BYTES);
    const exact = "c".repeat(INSTRUCTIONS_MAX_BYTES);
    onBase(t, { [CLAUDE]: exact });
    const read = await readRepoInstructions(t.clone, "main", git(t.clone, "rev-parse", "refs/remotes/origin/main"));
    assert.equal({ ...read.files![0], text: read.files![0].text.length }, { path: CLAUDE, text: INSTRUCTIONS_MAX_BYTES, bytes: INSTRUCTIONS_MAX_BYTES, truncated: false }, "16 KiB exactly is whole");
  }));

test("a file only in the working tree, or changed there, or committed on the worker's branch, is never read", () =>
  withTempDir(async (dir) => {
    const t = template.copy(dir);
    const base = onBase(t, { [CLAUDE]: "Committed words.\n" });
    const path = worktree(t);
    // Untracked, and a tracked file changed but not committed.
    mkdirSync(join(path, ".robot-army"), { recursive: true });
    writeFileSync(join(path, NEUTRAL), "Only in the working tree.\n");
    writeFileSync(join(path, CLAUDE), "Changed, not committed.\n");
    git(path, "add", "--", NEUTRAL);
    assert.equal(await inWorktree(path), { base: "main", commit: base, files: [{ path: CLAUDE, text: "Committed words.\n", bytes: 17, truncated: false }] });
    // A worker's commit on its branch is not the repository's word either: the read stays where the branch left main.
    git(path, "add", "--", CLAUDE);
    git(path, "commit", "--quiet", "-m", "The worker rewrites the instructions");
    assert.is(await startingCommit(path, "HEAD", "main"), base);
    assert.equal(paths(await inWorktree(path)), [CLAUDE]);
    assert.is((await inWorktree(path)).files![0].text, "Committed words.\n");
  }));

test("a symbolic link or a folder by an instruction file's name is not read", () =>
  withTempDir(async (dir) => {
    const t = template.copy(dir);
    writeFileSync(join(t.clone, "secret.txt"), "not instructions\n");
    mkdirSync(join(t.clone, ".claude"), { recursive: true });
    symlinkSync("../secret.txt", join(t.clone, CLAUDE));
    mkdirSync(join(t.clone, NEUTRAL), { recursive: true });
    writeFileSync(join(t.clone, NEUTRAL, "inside.md"), "in a folder\n");
    git(t.clone, "add", "--", "secret.txt", CLAUDE, NEUTRAL);
    git(t.clone, "commit", "--quiet", "-m", "Odd shapes");
    assert.equal(paths(await readRepoInstructions(t.clone, "main", git(t.clone, "rev-parse", "HEAD"))), []);
  }));

test("cloneInstructions reads where the item's branch left origin/<base>, or origin/<base> before there is a branch, and says what it cannot read", () =>
  withTempDir(async (dir) => {
    const t = template.copy(dir);
    const first = onBase(t, { [CLAUDE]: "First words.\n" });
    const before = await cloneInstructions(t.clone, BRANCH, "main");
    assert.equal([before.commit, before.files![0].text], [first, "First words.\n"]);
    worktree(t);
    const later = onBase(t, { [CLAUDE]: "Later words.\n" });
    const onBranch = await cloneInstructions(t.clone, BRANCH, "main");
    assert.equal([onBranch.commit, onBranch.files![0].text], [first, "First words.\n"], "the branch started before the change");
    const fresh = await cloneInstructions(t.clone, "robot-army/issue-8-other", "main");
    assert.equal([fresh.commit, fresh.files![0].text], [later, "Later words.\n"]);
    const missing = await cloneInstructions(t.clone, BRANCH, "no-such-base");
    assert.equal([missing.base, missing.files], ["no-such-base", undefined]);
    assert.match(missing.unreadable!, 'Cannot tell where "refs/heads/robot-army/issue-7-fix-it" left the base branch "origin/no-such-base"');
    const nowhere = await cloneInstructions(join(dir, "nowhere"), BRANCH, "main");
    assert.type(nowhere.unreadable, "string");
  }));

test("startingCommit refuses when it cannot tell, rather than guess", () =>
  withTempDir(async (dir) => {
    const t = template.copy(dir);
    const refused = await startingCommit(t.clone, "HEAD", "gone").then(() => undefined, (error: Error) => error.message);
    assert.match(refused ?? "it answered", /^Cannot tell where "HEAD" left the base branch "origin\/gone" in ".*":/);
  }));

test.run();
