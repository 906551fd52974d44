/**
 * The forge's bare git repositories: made with a first commit on the default branch,
 * read for branch heads, merged into for real (a merge or squash commit written with
 * `git merge-tree --write-tree` and `commit-tree`, no worktree needed), a branch deleted,
 * and each pull request's `refs/pull/<n>/head` written and read, as GitHub keeps them.
 * Every git call goes through dax; arguments are passed as arrays, never joined into a
 * command string.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";

let dax: typeof import("dax-sh").$ | undefined;

/** Who a commit the forge writes is by, and when. */
export interface GitIdentity {
  name: string;
  email: string;
  /** ISO time. */
  date: string;
}

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function runGit(cwd: string, args: string[], options: { stdin?: string; who?: GitIdentity } = {}): Promise<GitResult> {
  dax ??= (await import("dax-sh")).$;
  let command = dax`git ${args}`.cwd(cwd).quiet().noThrow();
  if (options.stdin !== undefined) command = command.stdinText(options.stdin);
  if (options.who) {
    const { name, email, date } = options.who;
    command = command.env({
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_EMAIL: email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: name,
      GIT_COMMITTER_EMAIL: email,
      GIT_COMMITTER_DATE: date,
    });
  }
  const result = await command;
  return { code: result.code, stdout: result.stdout, stderr: result.stderr };
}

async function git(cwd: string, args: string[], options?: { stdin?: string; who?: GitIdentity }): Promise<string> {
  const result = await runGit(cwd, args, options);
  if (result.code !== 0) {
    throw new Error(`git ${args.join(" ")} failed in "${cwd}": ${result.stderr.trim() || `exit ${result.code}`}`);
  }
  return result.stdout.trim();
}

/**
 * Makes a bare repository with one commit (a README) on `branch`, unless one is there
 * already; returns the branch's head commit either way.
 */
export async function ensureBareRepo(path: string, branch: string, readme: string, who: GitIdentity): Promise<string> {
  if (existsSync(path)) {
    const head = await branchHead(path, branch);
    if (head) return head;
  } else {
    mkdirSync(dirname(path), { recursive: true });
    await git(dirname(path), ["init", "--quiet", "--bare", `--initial-branch=${branch}`, path]);
  }
  const blob = await git(path, ["hash-object", "-w", "--stdin"], { stdin: readme });
  const tree = await git(path, ["mktree"], { stdin: `100644 blob ${blob}\tREADME.md\n` });
  const commit = await git(path, ["commit-tree", tree, "-m", "Initial commit"], { who });
  await git(path, ["update-ref", `refs/heads/${branch}`, commit, ""]);
  return commit;
}

/** Every branch of the repository with its head commit. */
export async function branchHeads(path: string): Promise<Map<string, string>> {
  const out = await git(path, ["for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/"]);
  const heads = new Map<string, string>();
  for (const line of out.split("\n")) {
    const space = line.indexOf(" ");
    if (space > 0) heads.set(line.slice(space + 1).replace(/^refs\/heads\//, ""), line.slice(0, space));
  }
  return heads;
}

/** The ref GitHub keeps a pull request's head under: it outlives the head branch, merged or not. */
export function pullHeadRef(number: number): string {
  return `refs/pull/${number}/head`;
}

/** Every `refs/pull/<n>/head` of the repository, by pull request number, with its commit. */
export async function pullHeads(path: string): Promise<Map<number, string>> {
  const out = await git(path, ["for-each-ref", "--format=%(objectname) %(refname)", "refs/pull/"]);
  const heads = new Map<number, string>();
  for (const line of out.split("\n")) {
    const match = /^([0-9a-f]+) refs\/pull\/(\d+)\/head$/.exec(line);
    if (match) heads.set(Number(match[2]), match[1]);
  }
  return heads;
}

/**
 * Points `refs/pull/<n>/head` at `sha` (made if it is not there yet). A read of the forge
 * may be moving the same ref at that moment (git's lock on it refuses the second writer),
 * so a refusal is tried again a few times before it fails.
 */
export async function writePullHead(path: string, number: number, sha: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const result = await runGit(path, ["update-ref", pullHeadRef(number), sha]);
    if (result.code === 0) return;
    if (attempt === 5) throw new Error(`git update-ref ${pullHeadRef(number)} failed in "${path}": ${result.stderr.trim() || `exit ${result.code}`}`);
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
  }
}

/**
 * Deletes a branch if it still points at `sha` (git's own check, `update-ref -d`):
 * false when it has moved or is gone.
 */
export async function deleteBranch(path: string, branch: string, sha: string): Promise<boolean> {
  return (await runGit(path, ["update-ref", "-d", `refs/heads/${branch}`, sha])).code === 0;
}

/** A branch's head commit, or undefined when there is no such branch. */
export async function branchHead(path: string, branch: string): Promise<string | undefined> {
  const result = await runGit(path, ["rev-parse", "-q", "--verify", `refs/heads/${branch}^{commit}`]);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/** How many commits `head` has that `base` does not. */
export async function commitsAhead(path: string, base: string, head: string): Promise<number> {
  return Number(await git(path, ["rev-list", "--count", `${base}..${head}`]));
}

/** What `head` changes since it left `base` (`base...head`): lines added and deleted, files changed (a binary file counts as changed only). */
export async function diffStat(path: string, base: string, head: string): Promise<{ additions: number; deletions: number; changed_files: number }> {
  const lines = (await git(path, ["diff", "--numstat", `${base}...${head}`])).split("\n").filter(Boolean);
  const count = (field: string) => (/^\d+$/.test(field) ? Number(field) : 0);
  const parts = lines.map((line) => line.split("\t"));
  return { additions: parts.reduce((n, [added]) => n + count(added), 0), deletions: parts.reduce((n, [, deleted]) => n + count(deleted), 0), changed_files: lines.length };
}

/** The tree merging two commits gives, or undefined when they conflict. */
export async function mergedTree(path: string, base: string, head: string): Promise<string | undefined> {
  const result = await runGit(path, ["merge-tree", "--write-tree", "--no-messages", base, head]);
  if (result.code === 1) return undefined;
  if (result.code !== 0) throw new Error(`git merge-tree failed in "${path}": ${result.stderr.trim() || `exit ${result.code}`}`);
  return result.stdout.trim().split("\n")[0];
}

/** How a pull request's commits land on its base. */
export type MergeMethod = "merge" | "squash";

/** What `mergeBranch` was asked to do. */
export interface MergeRequest {
  base: string;
  head: string;
  method: MergeMethod;
  message: string;
  who: GitIdentity;
}

/** What a merge did: the new base commit, or why there is none. */
export type MergeResult = { merged: true; sha: string } | { merged: false; reason: "conflict" | "moved" | "missing" };

/**
 * Merges branch `head` into branch `base` in a bare repository: a merge commit with both
 * parents, or a squash commit with the base as its only parent. The base moves only if
 * it still points where it did when the merge was computed.
 */
export async function mergeBranch(path: string, request: MergeRequest): Promise<MergeResult> {
  const baseSha = await branchHead(path, request.base);
  const headSha = await branchHead(path, request.head);
  if (!baseSha || !headSha) return { merged: false, reason: "missing" };
  const tree = await mergedTree(path, baseSha, headSha);
  if (!tree) return { merged: false, reason: "conflict" };
  const parents = request.method === "merge" ? ["-p", baseSha, "-p", headSha] : ["-p", baseSha];
  const commit = await git(path, ["commit-tree", tree, ...parents, "-m", request.message], { who: request.who });
  const moved = await runGit(path, ["update-ref", `refs/heads/${request.base}`, commit, baseSha]);
  if (moved.code !== 0) return { merged: false, reason: "moved" };
  return { merged: true, sha: commit };
}
