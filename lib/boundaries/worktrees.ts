/**
 * The worktree boundary: creating a work item's worktree and branch from the freshly
 * fetched base, running the owner's post-create steps in it, and removing both under the
 * guards of DESIGN rule 2 (a live or unknown session refuses, git's refusals stand unless
 * forced, and a report never says "removed" for something still on disk).
 *
 * Every git call and every step goes through dax with its arguments as an array (needs git
 * 2.36 or later for `worktree list -z`).
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { PreconditionError, RobotArmyError } from "../errors.ts";
import { branchExists } from "./branches.ts";
import { git, loadDax, runGit, tail } from "./run-git.ts";
import { samePath } from "../same-path.ts";
import { redact } from "../redact.ts";
import { worktreeContents } from "./worktree-contents.ts";
import type { InUse } from "./worktree-contents.ts";

/** A worktree robot-army made: where it is, its branch, the base it came from and the commit it started at. */
export interface Worktree {
  path: string;
  branch: string;
  base: string;
  head: string;
}

/** What `createWorktree` needs: the local clone, the base branch on `origin`, and the item. */
export interface NewWorktree {
  repoPath: string;
  baseBranch: string;
  root: string;
  repo: string;
  issue: number;
  branch: string;
  /**
   * Asked about the exact commit the worktree will start at, after the fetch and before the
   * worktree is made; it throws to refuse (dispatch checks the repository's agent files there,
   * so a push between the gate and this fetch cannot slip past it).
   */
  vet?: (commit: string) => Promise<void>;
}

/** Fetching the base branch failed: dispatch stops here rather than start from a stale copy. */
export class FetchError extends RobotArmyError {
  /** The repository (`owner/name`) whose origin could not be fetched. */
  repo: string;
  /** The base branch that was asked for. */
  base: string;
  /** The end of git's stderr. */
  stderrTail: string;
  constructor(repo: string, repoPath: string, base: string, stderrTail: string) {
    super(`Cannot fetch branch "${base}" of "${repo}" from origin in "${repoPath}": ${stderrTail || "git gave no reason"}`);
    this.name = "FetchError";
    this.repo = repo;
    this.base = base;
    this.stderrTail = stderrTail;
  }
}

/** A post-create step failed; the steps after it were not run. */
export class PostCreateError extends RobotArmyError {
  /** The step's argv, as configured. */
  step: string[];
  /** Its position among the steps, from 0. */
  index: number;
  /** Its exit code (124 when it ran out of time). */
  exitCode: number;
  /** The end of its stderr. */
  stderrTail: string;
  constructor(step: string[], index: number, exitCode: number, stderrTail: string, path: string, timedOut: boolean) {
    const how = timedOut ? "ran out of time" : `failed with exit ${exitCode}`;
    super(redact(`Post-create step ${index + 1} ${JSON.stringify(step)} ${how} in "${path}"${stderrTail ? `: ${lastLine(stderrTail)}` : ""}`));
    this.name = "PostCreateError";
    this.step = step;
    this.index = index;
    this.exitCode = exitCode;
    this.stderrTail = stderrTail;
  }
}

/** Where an item's worktree lives: `<root>/<owner>/<name>/issue-<n>`. */
export function worktreePath(root: string, repo: string, issue: number): string {
  if (!isAbsolute(root)) throw new TypeError(`Worktree root must be an absolute path, got "${root}"`);
  const [owner, name, ...rest] = repo.split("/");
  if (rest.length > 0 || !isRepoPart(owner) || !isRepoPart(name)) throw new TypeError(`Repository must be "owner/name", got "${repo}"`);
  if (!Number.isSafeInteger(issue) || issue <= 0) throw new RangeError(`Issue number must be a positive integer, got ${JSON.stringify(issue)}`);
  return join(root, owner, name, `issue-${issue}`);
}

/**
 * Fetches `origin/<base>` and adds the item's worktree on a new branch from it. A worktree
 * already at that path, or a branch already by that name, is a precondition error: resume
 * and restart reuse one explicitly through `existingWorktree`.
 */
export async function createWorktree(spec: NewWorktree): Promise<Worktree> {
  const { repoPath, baseBranch: base, branch } = spec;
  const path = worktreePath(spec.root, spec.repo, spec.issue);
  await requireBranchName(repoPath, branch);
  await requireBranchName(repoPath, base);
  const listed = await listWorktrees(repoPath);
  const atPath = listed.find((w) => samePath(w.path, path));
  if (atPath) throw new PreconditionError(`A worktree of "${spec.repo}" already exists at "${path}" on ${describeHead(atPath)}: resume or restart reuse it, reset removes it`);
  if (existsSync(path)) throw new PreconditionError(`"${path}" already exists and is not a worktree of "${repoPath}"`);
  const holder = listed.find((w) => w.branch === `refs/heads/${branch}`);
  if (holder) throw new PreconditionError(`Branch "${branch}" is already checked out in "${holder.path}"`);
  if (await branchExists(repoPath, branch)) throw new PreconditionError(`Branch "${branch}" already exists in "${repoPath}" without a worktree`);

  const start = await fetchBase(repoPath, spec.repo, base);
  await spec.vet?.(start);

  mkdirSync(dirname(path), { recursive: true });
  // At the commit fetched (and vetted), whatever moves origin/<base> meanwhile; then its upstream is
  // origin/<base>, as --track would make it, so a worker's plain `git pull` or `git status` weighs it against the remote's base.
  await git(repoPath, ["worktree", "add", "--quiet", "--no-track", "-b", branch, path, start]);
  await git(repoPath, ["branch", "--quiet", `--set-upstream-to=refs/remotes/origin/${base}`, branch]);
  const head = await git(path, ["rev-parse", "--verify", "HEAD^{commit}"]);
  return { path, branch, base, head };
}

/**
 * Fetches `base` from origin into `refs/remotes/origin/<base>` and returns the commit it
 * names: what a new worktree starts from. Onboarding and the gate read the agent files there.
 * Fetching writes only that remote-tracking ref (and the objects it needs) in the clone.
 */
export async function fetchBase(repoPath: string, repo: string, base: string): Promise<string> {
  await requireBranchName(repoPath, base);
  // An explicit refspec updates origin/<base> whatever fetch refspec the clone was made with.
  const fetched = await runGit(repoPath, ["fetch", "--quiet", "--no-tags", "origin", "--", `+refs/heads/${base}:refs/remotes/origin/${base}`]);
  if (fetched.code !== 0) throw new FetchError(repo, repoPath, base, tail(fetched.stderr));
  return await git(repoPath, ["rev-parse", "--verify", "--end-of-options", `refs/remotes/origin/${base}^{commit}`]);
}

/** The worktree at `path` when it is a linked worktree of `repoPath`, present on disk, on `branch`; undefined otherwise. */
export async function existingWorktree(spec: { repoPath: string; path: string; branch: string }): Promise<Omit<Worktree, "base"> | undefined> {
  const listed = await listWorktrees(spec.repoPath);
  const found = listed.find((w) => !w.main && samePath(w.path, spec.path));
  if (!found || found.prunable || !existsSync(spec.path)) return undefined;
  if (found.branch !== `refs/heads/${spec.branch}` || !found.head) return undefined;
  return { path: spec.path, branch: spec.branch, head: found.head };
}

/** Whether a worktree has uncommitted changes or untracked files; a folder git cannot read throws (unknown is not clean). */
export async function worktreeDirty(path: string): Promise<boolean> {
  const out = await git(path, ["status", "--porcelain", "-z", "--untracked-files=all"]);
  return out !== "";
}

/** Runs the post-create steps in a worktree, in order, each argv as a program (never a shell); the first failure stops them. */
export async function runPostCreate(path: string, steps: readonly (readonly string[])[], options: { timeoutMs?: number } = {}): Promise<void> {
  const $ = await loadDax();
  for (const [index, step] of steps.entries()) {
    if (step.length === 0 || step[0] === "") throw new TypeError(`Post-create step ${index + 1} is empty`);
    let command = $`${[...step]}`.cwd(path).stdin("null").stdout("null").stderr("piped").noThrow();
    // dax answers some names itself (cp, rm, echo, ...) with fewer options than the real programs; a step means the program.
    for (const name of DAX_BUILTINS) command = command.unregisterCommand(name);
    if (options.timeoutMs !== undefined) command = command.timeout(options.timeoutMs);
    const started = Date.now();
    const result = await command;
    if (result.code !== 0) {
      const timedOut = options.timeoutMs !== undefined && result.code === 124 && Date.now() - started >= options.timeoutMs;
      throw new PostCreateError([...step], index, result.code, tail(result.stderr), path, timedOut);
    }
  }
}

/** Whether a session works in the worktree, as the caller knows it; "unknown" refuses removal like `true` does. */
export type LiveSession = boolean | "unknown";

/**
 * Why a worktree directory was kept: a session, git's refusal, what git does not see
 * (lib/boundaries/worktree-contents.ts), a directory still there after a reported removal, or
 * not the item's worktree.
 */
export type KeptCode = "session" | "git_refused" | "hidden_work" | "directory_survived" | "not_a_worktree";

/** What became of the worktree directory: `removed` only when it is gone because of this call, with the ignored paths that went with it. */
export type WorktreeOutcome = { status: "removed"; deleted?: string[] } | { status: "absent" } | { status: "kept"; code: KeptCode; reason: string };

/** What to remove: the worktree at `path` of `repoPath`, on `branch`, with what the caller's session guard answered. */
export interface WorktreeRemovalSpec {
  repoPath: string;
  path: string;
  branch: string;
  /** Passes `--force` to git (uncommitted work is lost): only from the owner's typed confirmation. */
  force?: boolean;
  liveSession: LiveSession;
  /** The owner's build output, deleted with the worktree (`[cleanup] disposable`); none when not given, so every ignored file keeps it. */
  disposable?: readonly string[];
  /** Lists the processes working in a folder (default: /proc); a test's stand-in. */
  inUse?: (path: string) => InUse;
}

/**
 * Removes a worktree directory, keeping it when a guard says no: a live or unknown
 * session keeps it (force or not); git's refusal over uncommitted or untracked work stands
 * unless `force`; a folder that is not this clone's worktree on `branch` is never touched.
 * A directory already gone had only git's record of it cleared: `absent`. Refusals are
 * outcomes, not exceptions.
 */
export async function removeWorktreeDirectory(spec: WorktreeRemovalSpec): Promise<WorktreeOutcome> {
  const { repoPath, path, branch, force = false, liveSession } = spec;
  if (liveSession === "unknown") return { status: "kept", code: "session", reason: "whether a session works in it is unknown" };
  if (liveSession !== false) return { status: "kept", code: "session", reason: "a live session works in it" };
  const found = (await listWorktrees(repoPath)).find((w) => samePath(w.path, path));
  if (!found) {
    return existsSync(path) ? { status: "kept", code: "not_a_worktree", reason: `"${path}" is not a worktree of "${repoPath}"` } : { status: "absent" };
  }
  if (found.main) return { status: "kept", code: "not_a_worktree", reason: `"${path}" is the repository's main checkout` };
  if (found.branch !== `refs/heads/${branch}`) return { status: "kept", code: "not_a_worktree", reason: `it is on ${describeHead(found)}, not branch "${branch}"` };
  const wasThere = existsSync(path);
  let deleted: string[] = [];
  if (wasThere) {
    // What git does not weigh is looked at first: a worktree is removed only when all of it is proven safe to lose.
    let contents;
    try {
      contents = await worktreeContents(path, { disposable: spec.disposable ?? [], ...(spec.inUse ? { inUse: spec.inUse } : {}) });
    } catch (error) {
      return { status: "kept", code: "hidden_work", reason: `what it holds beyond git's view cannot be looked at: ${(error as Error).message}` };
    }
    const keeping = contents.keepers.filter((keeper) => keeper.always || !force);
    if (keeping.length) return { status: "kept", code: "hidden_work", reason: keeping.map((keeper) => keeper.what).join("; ") };
    deleted = [...contents.deleted, ...(force ? contents.ignored : [])];
  }
  const removed = await runGit(repoPath, ["worktree", "remove", ...(force ? ["--force"] : []), path]);
  if (removed.code !== 0) return { status: "kept", code: "git_refused", reason: tail(removed.stderr) || `git worktree remove exited ${removed.code}` };
  if (existsSync(path)) return { status: "kept", code: "directory_survived", reason: `"${path}" is still there after git worktree remove` };
  // A directory that was already gone had only its registration cleared: nothing was removed from disk here.
  return wasThere ? { status: "removed", ...(deleted.length ? { deleted } : {}) } : { status: "absent" };
}

/** One entry of `git worktree list --porcelain -z`. */
export interface ListedWorktree {
  path: string;
  head?: string;
  branch?: string;
  main: boolean;
  prunable: boolean;
}

/** The worktrees git lists for the clone at `repoPath`, its main checkout first. */
export async function listWorktrees(repoPath: string): Promise<ListedWorktree[]> {
  const out = await git(repoPath, ["worktree", "list", "--porcelain", "-z"]);
  const entries: ListedWorktree[] = [];
  let current: ListedWorktree | undefined;
  for (const line of out.split("\0")) {
    if (line === "") {
      current = undefined;
      continue;
    }
    const space = line.indexOf(" ");
    const [key, value] = space === -1 ? [line, ""] : [line.slice(0, space), line.slice(space + 1)];
    if (key === "worktree") {
      current = { path: value, main: entries.length === 0, prunable: false };
      entries.push(current);
    } else if (current && key === "HEAD") current.head = value;
    else if (current && key === "branch") current.branch = value;
    else if (current && key === "prunable") current.prunable = true;
  }
  return entries;
}

function describeHead(w: ListedWorktree): string {
  return w.branch ? `branch "${w.branch.replace(/^refs\/heads\//, "")}"` : "a detached HEAD";
}

/** Refuses a name git would not take as a branch (or would read as an option, or expand like `@{-1}`). */
async function requireBranchName(repoPath: string, name: string): Promise<void> {
  const checked = name.startsWith("-") ? undefined : await runGit(repoPath, ["check-ref-format", "--branch", name]);
  if (!checked || checked.code !== 0 || checked.stdout.trim() !== name) throw new TypeError(`"${name}" is not a branch name git accepts`);
}

const REPO_PART = /^[A-Za-z0-9_.-]+$/;

function isRepoPart(part: string | undefined): part is string {
  return part !== undefined && REPO_PART.test(part) && part !== "." && part !== "..";
}


function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}

/** The names dax 0.44 runs itself instead of looking up a program. */
const DAX_BUILTINS = ["cd", "printenv", "echo", "cat", "exit", "export", "sleep", "test", "rm", "mkdir", "cp", "mv", "pwd", "touch", "unset", "which"];
