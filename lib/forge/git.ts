/**
 * The forge's bare git repositories: made with a first commit on the default branch,
 * read for branch heads, merged into for real (a merge or squash commit written with
 * `git merge-tree --write-tree` and `commit-tree`, no worktree needed), and each pull
 * request's `refs/pull/<n>/head` written and read, as GitHub keeps them. For the git
 * database endpoints (refs.ts, commits.ts): any reference read, listed, made, moved and
 * deleted, each write a compare-and-swap by `git update-ref <ref> <new> <old>`, so a
 * writer racing another (or a push) loses rather than overwrites; and commits written
 * with `commit-tree` (the empty tree included) and read back whole.
 * Every git call goes through dax; arguments are passed as arrays, never joined into a
 * command string.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { isoSeconds } from "../clock.ts";

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

interface GitOptions {
  stdin?: string;
  /** The commit's author, and its committer unless `committer` says otherwise. */
  who?: GitIdentity;
  committer?: GitIdentity;
}

async function runGit(cwd: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  dax ??= (await import("dax-sh")).$;
  let command = dax`git ${args}`.cwd(cwd).quiet().noThrow();
  if (options.stdin !== undefined) command = command.stdinText(options.stdin);
  if (options.who) {
    const author = options.who;
    const committer = options.committer ?? author;
    command = command.env({
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_AUTHOR_DATE: author.date,
      GIT_COMMITTER_NAME: committer.name,
      GIT_COMMITTER_EMAIL: committer.email,
      GIT_COMMITTER_DATE: committer.date,
    });
  }
  const result = await command;
  return { code: result.code, stdout: result.stdout, stderr: result.stderr };
}

async function git(cwd: string, args: string[], options?: GitOptions): Promise<string> {
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

/** The tree with nothing in it, the same object name in every SHA-1 repository. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** A reference and the object it points at. */
export interface GitRef {
  /** Fully qualified: `refs/heads/main`, `refs/robot-army/claims/12`. */
  ref: string;
  sha: string;
  /** The object's type: `commit`, or `tag` for an annotated tag. */
  type: string;
}

const REF_FORMAT = "--format=%(objectname) %(objecttype) %(refname)";

/** Every reference of the repository, sorted by name as git sorts them. */
export async function listRefs(path: string): Promise<GitRef[]> {
  return parseRefs(await git(path, ["for-each-ref", REF_FORMAT]));
}

/** One reference by its full name, or undefined when there is none of that name. */
export async function readRef(path: string, ref: string): Promise<GitRef | undefined> {
  // for-each-ref matches a pattern as a prefix (and as a glob): only the exact name counts.
  return parseRefs(await git(path, ["for-each-ref", REF_FORMAT, ref])).find((found) => found.ref === ref);
}

function parseRefs(out: string): GitRef[] {
  return out
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      // A ref name cannot hold a space (git check-ref-format), so the third field is all of it.
      const [sha, type, ref] = line.split(" ");
      return { ref, sha, type };
    });
}

/** Whether git accepts `ref` as a reference's full name (`git check-ref-format`). */
export async function validRefName(path: string, ref: string): Promise<boolean> {
  return (await runGit(path, ["check-ref-format", ref])).code === 0;
}

/** The type of the object a full 40-hex `sha` names (`commit`, `tree`, `blob`, `tag`), or undefined when the repository lacks it. */
export async function objectType(path: string, sha: string): Promise<string | undefined> {
  // Anything but an object name would be resolved as a revision (`HEAD`, `main~1`).
  if (!/^[0-9a-f]{40}$/.test(sha)) return undefined;
  const result = await runGit(path, ["cat-file", "-t", sha]);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/**
 * Makes a reference pointing at `sha`, only if there is none of that name: the empty old
 * value tells `git update-ref` it must not exist, checked under git's lock on the ref, so of
 * two writers racing to make it one wins and the other gets false.
 */
export async function createRef(path: string, ref: string, sha: string): Promise<boolean> {
  return (await runGit(path, ["update-ref", ref, sha, ""])).code === 0;
}

/**
 * Moves a reference to `sha` if it still points at `old` (git's compare-and-swap under its
 * lock on the ref): false when it has moved, is gone, or another writer holds it.
 */
export async function moveRef(path: string, ref: string, sha: string, old: string): Promise<boolean> {
  return (await runGit(path, ["update-ref", ref, sha, old])).code === 0;
}

/** Deletes a reference if it still points at `sha` (`update-ref -d`): false when it has moved or is gone. */
export async function deleteRef(path: string, ref: string, sha: string): Promise<boolean> {
  return (await runGit(path, ["update-ref", "-d", ref, sha])).code === 0;
}

/** Whether moving a reference from commit `from` to commit `to` is a fast-forward: `from` is `to` or one of its ancestors. */
export async function isAncestor(path: string, from: string, to: string): Promise<boolean> {
  // Exit 1 is "no"; anything else (one of them is no commit) is no fast-forward either.
  return (await runGit(path, ["merge-base", "--is-ancestor", from, to])).code === 0;
}

/** A commit object: its tree, parents, who wrote and who committed it and when, and its message. */
export interface GitCommit {
  sha: string;
  tree: string;
  parents: string[];
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
}

/**
 * Writes a commit object (no reference moves) and returns its sha. The message is written as
 * given (on stdin: `-m` would end it with a newline), so it reads back the same. The empty
 * tree is written into the object store first: git knows its name without it, but a fetch of
 * the commit needs the object itself.
 */
export async function writeCommit(path: string, commit: Omit<GitCommit, "sha">): Promise<string> {
  if (commit.tree === EMPTY_TREE) await git(path, ["mktree"], { stdin: "" });
  const parents = commit.parents.flatMap((parent) => ["-p", parent]);
  return git(path, ["commit-tree", commit.tree, ...parents], { stdin: commit.message, who: commit.author, committer: commit.committer });
}

/** The commit a full 40-hex `sha` names, or undefined when it names no commit of the repository. */
export async function readCommit(path: string, sha: string): Promise<GitCommit | undefined> {
  if ((await objectType(path, sha)) !== "commit") return undefined;
  const result = await runGit(path, ["cat-file", "commit", sha]);
  if (result.code !== 0) throw new Error(`git cat-file commit ${sha} failed in "${path}": ${result.stderr.trim() || `exit ${result.code}`}`);
  const raw = result.stdout;
  const split = raw.indexOf("\n\n");
  const headers = (split < 0 ? raw : raw.slice(0, split)).split("\n");
  const field = (name: string) => headers.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1));
  return {
    sha,
    tree: field("tree")[0],
    parents: field("parent"),
    author: person(field("author")[0]),
    committer: person(field("committer")[0]),
    message: split < 0 ? "" : raw.slice(split + 2),
  };
}

/** `Name <email> 1768471200 +0100` as a name, an email and an ISO time in UTC, as GitHub gives it. */
function person(line: string | undefined): GitIdentity {
  const match = /^(.*) <(.*)> (\d+) [+-]\d{4}$/.exec(line ?? "");
  if (!match) return { name: "", email: "", date: isoSeconds(new Date(0)) };
  return { name: match[1], email: match[2], date: isoSeconds(new Date(Number(match[3]) * 1000)) };
}

/**
 * The commit a `{ref}` of GitHub's commit endpoints names: a commit's sha (or a prefix of
 * 7 or more of its hex digits), a branch or tag name, or a reference named from `heads/`,
 * `tags/` or `refs/`; undefined when it names none. No revision expressions (`main~1`).
 */
export async function resolveCommit(path: string, ref: string): Promise<string | undefined> {
  const candidates = /^[0-9a-f]{7,40}$/.test(ref) ? [ref] : [];
  if (!ref.startsWith("-") && !/[\s~^:?*[\\]|\.\.|@\{/.test(ref)) {
    candidates.push(...(ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`, `refs/${ref}`]));
  }
  for (const name of candidates) {
    const result = await runGit(path, ["rev-parse", "-q", "--verify", `${name}^{commit}`]);
    if (result.code === 0) return result.stdout.trim();
  }
  return undefined;
}

/** One file's unified diff from where `head` left `base` to `head` (`git diff base...head -- file`); empty when it is unchanged. */
export async function fileDiff(path: string, base: string, head: string, file: string): Promise<string> {
  return git(path, ["diff", "--no-color", "--no-ext-diff", `${base}...${head}`, "--", file]);
}
