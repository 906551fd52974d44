/**
 * What an item's worktree holds that the owner weighs before a verb that could lose it (resume
 * or restart, reset, cancel, abandon): its uncommitted changes, the commits on its branch that
 * are not on the base, and how many of them origin does not have, read with git in the
 * worktree against the remote-tracking branches as last fetched (nothing is fetched: reading
 * the facts changes nothing). Each is null when git cannot tell; nothing here throws.
 */
import { existsSync } from "node:fs";
import { runGit } from "./run-git.ts";

/** A worktree's work as git sees it now. */
export interface WorkFacts {
  worktree: string;
  /** Whether the worktree's folder is there at all (false: every count below is null). */
  present: boolean;
  /** Files changed, staged or untracked (not ignored), as `git status --porcelain` lists them. */
  uncommitted: number | null;
  /** A few of those files' paths, for the owner to recognise. */
  uncommitted_files: string[];
  /** Commits on HEAD not on `origin/<base>`: the work the branch holds. */
  ahead_of_base: number | null;
  /** Commits on HEAD not on `origin/<branch>` as last fetched: all of HEAD's own when origin has no such branch. */
  unpushed: number | null;
  /** Whether origin had the branch when last fetched. */
  on_origin: boolean | null;
  /** When HEAD's commit was made (ISO, the committer's time), null when unknown. */
  last_commit_at: string | null;
}

/** How many file paths are listed with the count. */
const FILES_SHOWN = 5;

/**
 * Reads the facts of the worktree at `worktree` on `branch`, started from `base`.
 * @example await workFacts("/state/worktrees/demo/widgets/issue-12", "ra/12-fix-parser", "main")
 */
export async function workFacts(worktree: string, branch: string, base: string): Promise<WorkFacts> {
  const none: WorkFacts = { worktree, present: false, uncommitted: null, uncommitted_files: [], ahead_of_base: null, unpushed: null, on_origin: null, last_commit_at: null };
  if (!existsSync(worktree)) return none;
  const answer = async (args: string[]) => {
    const result = await runGit(worktree, args);
    return result.code === 0 ? result.stdout : undefined;
  };
  const [status, onOrigin, last] = await Promise.all([
    answer(["status", "--porcelain", "--untracked-files=all"]),
    answer(["rev-parse", "-q", "--verify", `refs/remotes/origin/${branch}^{commit}`]),
    answer(["log", "-1", "--format=%cI", "HEAD"]),
  ]);
  const lines = status === undefined ? undefined : status.split("\n").filter(Boolean);
  const count = async (range: string) => {
    const out = await answer(["rev-list", "--count", range]);
    return out === undefined ? null : Number(out.trim());
  };
  const baseRef = `refs/remotes/origin/${base}`;
  const ahead = await count(`${baseRef}..HEAD`);
  const unpushed = onOrigin !== undefined ? await count(`refs/remotes/origin/${branch}..HEAD`) : ahead;
  return {
    worktree,
    present: true,
    uncommitted: lines?.length ?? null,
    uncommitted_files: (lines ?? []).slice(0, FILES_SHOWN).map((line) => line.slice(3)),
    ahead_of_base: ahead,
    unpushed,
    on_origin: status === undefined ? null : onOrigin !== undefined,
    last_commit_at: isoOrNull(last),
  };
}

/** git's committer date as an ISO time, or null when there is none or it is no time a Date can hold (a worker may set any date). */
function isoOrNull(text: string | undefined): string | null {
  const date = text?.trim() ? new Date(text.trim()) : undefined;
  return date && Number.isFinite(date.getTime()) && date.getUTCFullYear() <= 9999 ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

/**
 * The facts in words, one line each, as `show`, the item's page and a confirmation say them.
 * @example describeWork(facts) // ["uncommitted: 2 files (src/a.ts, notes.md)", "commits: 3 not on main, 1 not pushed"]
 */
export function describeWork(facts: WorkFacts, base: string): string[] {
  if (!facts.present) return [`worktree: gone (${facts.worktree})`];
  const files = facts.uncommitted_files.length ? ` (${facts.uncommitted_files.join(", ")}${facts.uncommitted! > facts.uncommitted_files.length ? ", ..." : ""})` : "";
  const uncommitted = facts.uncommitted === null ? "uncommitted: cannot be told" : facts.uncommitted === 0 ? "uncommitted: none" : `uncommitted: ${facts.uncommitted} file${facts.uncommitted === 1 ? "" : "s"}${files}`;
  const ahead = facts.ahead_of_base === null ? `commits: cannot be told against origin/${base}` : `commits: ${facts.ahead_of_base} not on ${base}`;
  const pushed = facts.unpushed === null ? "" : facts.on_origin === false ? `, the branch not on origin` : facts.unpushed === 0 ? ", all pushed" : `, ${facts.unpushed} not pushed`;
  return [uncommitted, ahead + (facts.ahead_of_base === null ? "" : pushed)];
}
