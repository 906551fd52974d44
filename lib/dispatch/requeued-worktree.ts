/**
 * The worktree a dispatch cut short before its worker started left behind. Settling the claim
 * puts such an item back in the queue (lib/daemon/settle-claims.ts) with the worktree it made,
 * at the commit it was made at, on the record of that move; the next dispatch carries on in it
 * rather than fail on it (a new worktree is never made over one) or remove it (nothing is
 * deleted to start again). Only while git still lists it there, on that branch, at that commit,
 * with no uncommitted change: anything else (a commit or a change since, another branch) is not
 * taken for the one left, and the new dispatch refuses it as any other. Its reuse is on record
 * (`worktree.reused`).
 */
import { existingWorktree, worktreeDirty } from "../boundaries/worktrees.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";

/** The mark on a `-> ready` record written when a dispatch cut short before its worker started is put back in the queue. */
export const REQUEUED = "requeued";

/** A worktree left by a cut-short dispatch: where, on which branch, at which commit. */
export interface LeftWorktree {
  path: string;
  branch: string;
  head: string;
}

/**
 * How many times in a row the item went back to the queue after a dispatch cut short before its
 * worker started: a worker that started, a failure, or any other way back to the queue (the
 * owner's retry or reset) starts the count again.
 */
export function requeueCount(store: Store, item: number): number {
  let count = 0;
  for (const record of queryAudit(store, { kind: "state.work_item", item })) {
    if (record.body.to === "ready") count = record.body[REQUEUED] === true ? count + 1 : 0;
    else if (record.body.to === "failed" || record.body.to === "active") count = 0;
  }
  return count;
}

/** The worktree the item's last requeue left, when git still lists it on its branch at the same commit; else undefined. */
export async function worktreeLeftByCut(store: Store, repoPath: string, item: number): Promise<LeftWorktree | undefined> {
  const last = queryAudit(store, { kind: "state.work_item", item }).filter((r) => r.body.to === "ready").at(-1);
  if (!last || last.body[REQUEUED] !== true) return undefined;
  const left = last.body.worktree as Partial<LeftWorktree> | null | undefined;
  if (!left || typeof left.path !== "string" || typeof left.branch !== "string" || typeof left.head !== "string") return undefined;
  const found = await existingWorktree({ repoPath, path: left.path, branch: left.branch });
  if (found?.head !== left.head) return undefined;
  // Clean as it was left: a change made in it since is someone's work, never carried on over.
  return await worktreeDirty(left.path) ? undefined : found;
}
