/**
 * `git worktree list` asked again only when git's record of a clone's worktrees changed: the
 * daemon's disk anomalies read every onboarded clone's list on every pass, and over 200
 * worktrees git takes about 40 ms to say what it said the pass before.
 *
 * What git lists (each worktree's path, branch, whether it is locked or prunable, and the
 * main checkout) comes from files in the clone's `.git`: `HEAD`, `config` and `config.worktree`
 * for the main checkout, and for each entry of `.git/worktrees/` its `HEAD`, `gitdir` (where
 * the worktree is) and `locked`, and the worktree's own `.git` file that `gitdir` names (gone:
 * prunable). Their stamp (inode, size, modification and change times, for a file that is
 * absent "absent"), the entries' names and who owns the clone and its `.git` (git refuses a
 * clone another user owns) are read before git is asked and again after: the answer is
 * remembered only when both read the same, and given back while the stamp stays the same.
 * Git replaces `HEAD` and `config` through a lock file renamed over them, so a change comes
 * with a new inode even within one tick of the file system's clock; an entry added or removed
 * changes the names.
 *
 * Asked every time instead: a clone whose `.git` is not a directory (itself a linked worktree,
 * a submodule's checkout), one whose refs are kept in reftable (its `HEAD` files are stubs: the
 * branch a worktree has out is not in them), one whose entries name their worktrees by relative
 * paths (git resolves those from the entry's real path), and one whose files cannot be read.
 * Left out of what is remembered: the commit each worktree is at (a commit on its branch changes
 * none of these files), so the list has no `head`. Not watched: configuration from outside the
 * clone (global, system, included files). Nothing here decides a removal: `worktree remove` and
 * cleanup ask git.
 *
 * @example
 * const memo = newWorktreeListMemo();
 * const listed = await listWorktreesRemembered("/home/me/src/widgets", memo);
 */
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { listWorktrees } from "./worktrees.ts";
import type { ListedWorktree } from "./worktrees.ts";

/** A worktree as git listed it, without the commit it is at. */
export type RememberedWorktree = Omit<ListedWorktree, "head">;

/** The lists remembered, by clone path, and how many times git was asked (what a test and the bench read). */
export interface WorktreeListMemo {
  readonly lists: Map<string, { stamp: string; listed: RememberedWorktree[] }>;
  gitRuns: number;
}

export function newWorktreeListMemo(): WorktreeListMemo {
  return { lists: new Map(), gitRuns: 0 };
}

/** The worktrees git lists for the clone at `repoPath`, main checkout first: remembered while git's record of them is unchanged. */
export async function listWorktreesRemembered(repoPath: string, memo: WorktreeListMemo): Promise<RememberedWorktree[]> {
  const before = recordStamp(repoPath);
  const kept = memo.lists.get(repoPath);
  if (before !== undefined && kept?.stamp === before) return kept.listed;
  memo.gitRuns++;
  const listed = (await listWorktrees(repoPath)).map(({ head: _head, ...worktree }) => worktree);
  const after = recordStamp(repoPath);
  if (before !== undefined && after === before) memo.lists.set(repoPath, { stamp: before, listed });
  else memo.lists.delete(repoPath);
  return listed;
}

/** The stamp of everything `git worktree list` reads for this clone; undefined when it cannot be taken (ask git). */
function recordStamp(repoPath: string): string | undefined {
  const gitDir = join(repoPath, ".git");
  try {
    const dotGit = lstatSync(gitDir);
    if (!dotGit.isDirectory() || fileStamp(join(gitDir, "reftable")) !== "absent") return undefined;
    const owners = `${lstatSync(repoPath).uid}:${dotGit.uid}`;
    const parts = [owners, fileStamp(join(gitDir, "HEAD")), fileStamp(join(gitDir, "config")), fileStamp(join(gitDir, "config.worktree"))];
    const admin = join(gitDir, "worktrees");
    for (const name of entryNames(admin)) {
      const entry = join(admin, name);
      const gitdir = join(entry, "gitdir");
      const points = readOrAbsent(gitdir)?.trim();
      if (points !== undefined && !isAbsolute(points)) return undefined;
      parts.push(name, fileStamp(join(entry, "HEAD")), fileStamp(gitdir), points ?? "", fileStamp(join(entry, "locked")), points === undefined ? "none" : fileStamp(points));
    }
    return parts.join("\0");
  } catch {
    return undefined;
  }
}

function entryNames(admin: string): string[] {
  try {
    return readdirSync(admin).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

function readOrAbsent(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function fileStamp(path: string): string {
  try {
    const s = lstatSync(path, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return "absent";
    throw error;
  }
}
