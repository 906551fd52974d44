/**
 * What `worktree list` shows: every worktree robot-army made (the worktree each item's
 * newest session row records) and every directory in its worktree root, with the item
 * that claims it (or none), its branch, its size on disk, its condition and its cleanup
 * state. A directory no item claims is `unclaimed`, so "no worktrees recorded" is never
 * said over disk robot-army made; a dirty check git cannot make is `unknown`, never `clean`.
 *
 * @example
 * const { worktrees, totalBytes } = await listWorktreesOnDisk({ store, config, stateDir });
 */
import { worktreeRoot } from "../work-items/worktree-root.ts";
import { existsSync } from "node:fs";
import { worktreeDirty } from "../boundaries/worktrees.ts";
import { diskUsage } from "./disk-usage.ts";
import type { DiskUsage } from "./disk-usage.ts";
import { latestCleanup } from "./records.ts";
import type { CleanupState } from "./records.ts";
import { cloneWorktrees, unclaimedDirectories, worktreeClaims } from "./unclaimed.ts";
import type { UnclaimedDeps } from "./unclaimed.ts";

/** A worktree's condition: git's word on its tree, `missing` when its directory is gone, `unclaimed` when no item claims it. */
export type WorktreeCondition = "clean" | "dirty" | "unknown" | "missing" | "unclaimed";

/** One line of `worktree list`. */
export interface ListedWorktree {
  path: string;
  /** The work item claiming it; null for an unclaimed directory. */
  item: number | null;
  repo: string | null;
  branch: string | null;
  /** Bytes on disk; null when the directory is gone. */
  bytes: number | null;
  /** Entries below it that could not be read, so `bytes` is a lower bound when this is not 0. */
  unreadable: number;
  condition: WorktreeCondition;
  /** The item's cleanup state (its latest cleanup record), or null when none is on record. */
  cleanup: CleanupState | null;
}

/** The list, and the bytes of all of it. */
export interface WorktreeListing {
  worktrees: ListedWorktree[];
  totalBytes: number;
}

/** Builds the listing: the claimed worktrees by item, then the unclaimed directories by path. */
export async function listWorktreesOnDisk(deps: UnclaimedDeps, options: { onProgress?: (path: string, sofar: DiskUsage) => void } = {}): Promise<WorktreeListing> {
  const claims = worktreeClaims(deps.store, worktreeRoot(deps.config, deps.stateDir));
  const { worktrees: listedByGit } = await cloneWorktrees(deps.store, deps.config);
  const measure = (path: string) => diskUsage(path, options.onProgress ? { onProgress: (sofar) => options.onProgress!(path, sofar) } : {});
  const worktrees: ListedWorktree[] = [];
  for (const claim of claims) {
    const usage = measure(claim.path);
    worktrees.push({
      path: claim.path, item: claim.item, repo: claim.repo, branch: claim.branch,
      bytes: usage?.bytes ?? null, unreadable: usage?.unreadable ?? 0,
      condition: await conditionOf(claim.path), cleanup: latestCleanup(deps.store, claim.item)?.state ?? null,
    });
  }
  for (const dir of await unclaimedDirectories(deps, { claims, worktrees: listedByGit })) {
    const usage = measure(dir.path);
    worktrees.push({
      path: dir.path, item: null, repo: dir.repo, branch: dir.branch,
      bytes: usage?.bytes ?? null, unreadable: usage?.unreadable ?? 0, condition: "unclaimed", cleanup: null,
    });
  }
  return { worktrees, totalBytes: worktrees.reduce((sum, w) => sum + (w.bytes ?? 0), 0) };
}

/** Git's word on a claimed worktree: `missing` when it is gone, `unknown` when git cannot read it. */
async function conditionOf(path: string): Promise<WorktreeCondition> {
  if (!existsSync(path)) return "missing";
  try {
    return (await worktreeDirty(path)) ? "dirty" : "clean";
  } catch {
    return "unknown";
  }
}

