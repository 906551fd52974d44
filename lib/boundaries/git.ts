/**
 * The git boundary: every git call robot-army makes, through dax (arguments are escaped
 * by dax, never joined into a command string).
 */
import { PreconditionError } from "../errors.ts";
import { git, runGit } from "./_run-git.ts";

/** Runs git where a non-zero exit is an answer (no such ref, no HEAD yet): undefined then. */
async function gitAnswer(cwd: string, args: string[]): Promise<string | undefined> {
  const result = await runGit(cwd, args);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/** Clones `url` into `dest` (a new folder) quietly; a failed clone throws with git's words. */
export async function cloneRepository(cwd: string, url: string, dest: string): Promise<void> {
  await git(cwd, ["clone", "--quiet", url, dest]);
}

/** Where a repository (or worktree) is and where it keeps its exclude file. */
export interface RepositoryInfo {
  root: string;
  excludeFile: string;
}

/** The repository the folder is in; a folder outside any repository is a precondition error. */
export async function repositoryAt(cwd: string): Promise<RepositoryInfo> {
  const out = await gitAnswer(cwd, ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-path", "info/exclude"]);
  const [root, excludeFile] = out?.split("\n") ?? [];
  if (!root || !excludeFile) throw new PreconditionError(`Not inside a git repository: "${cwd}"`);
  return { root, excludeFile };
}

/** The current branch's short name, or undefined on a detached HEAD. */
export function currentBranch(root: string): Promise<string | undefined> {
  return gitAnswer(root, ["symbolic-ref", "--short", "-q", "HEAD"]);
}

/** The commit HEAD points at, or undefined in a repository with no commits yet. */
export function headCommit(root: string): Promise<string | undefined> {
  return gitAnswer(root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"]);
}

/** A commit as a record lists it. */
export interface CommitSummary {
  sha: string;
  subject: string;
}

/** Commits reachable from `to` and not from `from`, oldest first (all of `to` when `from` is undefined). */
export async function commitsBetween(root: string, from: string | undefined, to: string): Promise<CommitSummary[]> {
  const range = from ? `${from}..${to}` : to;
  const out = await git(root, ["log", "--reverse", "--format=%H%x09%s", range]);
  return out ? out.split("\n").map((line) => {
    const [sha, ...subject] = line.split("\t");
    return { sha, subject: subject.join("\t") };
  }) : [];
}

/** Files that differ between two commits (every file of `to` when `from` is undefined). */
export async function changedFiles(root: string, from: string | undefined, to: string): Promise<string[]> {
  // -z: names exactly as they are, where plain output would quote unusual ones.
  const args = from
    ? ["diff", "-z", "--name-only", "--no-renames", from, to]
    : ["ls-tree", "-z", "-r", "--name-only", to];
  const out = await git(root, args);
  return out.split("\0").filter((name) => name !== "");
}

/** The URL of a remote as configured (`git remote get-url`), or undefined when there is no such remote. */
export function remoteUrl(root: string, remote: string): Promise<string | undefined> {
  return gitAnswer(root, ["remote", "get-url", "--", remote]);
}

/** What `git --version` says (`git version 2.43.0`), or undefined when git cannot be run. */
export async function gitVersion(): Promise<string | undefined> {
  try {
    return await gitAnswer("/", ["--version"]);
  } catch {
    // dax throws when the binary is not on PATH at all.
    return undefined;
  }
}
