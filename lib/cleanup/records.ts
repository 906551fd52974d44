/**
 * The cleanup records: one row per decision about a finished item's worktree and branch
 * (table `cleanups`). The latest row of an item is its cleanup state; the path and branch
 * stay on the record after a removal, so "what was at this path?" stays answerable.
 */
import { isoSeconds, now } from "../clock.ts";
import type { Store } from "../store/open.ts";

/** What a decision concluded (issue 12's table): both gone, the branch kept, both kept, or not yet. */
export type CleanupState = "done" | "branch_retained" | "retained" | "skipped";

/** Who made the decision: the daemon's pass, `robot-army cleanup`, or `robot-army worktree remove`. */
export type CleanupBy = "pass" | "cleanup" | "worktree remove";

/** One decision, as stored. */
export interface CleanupRecord {
  id: number;
  item: number;
  state: CleanupState;
  reason: string;
  worktree_path: string;
  branch: string;
  worktree: "removed" | "absent" | "kept" | "simulated";
  branch_outcome: "deleted" | "absent" | "kept" | "simulated" | "not_attempted";
  /** How every commit of the branch was proven on the remote (null when it was not). */
  proof: string | null;
  /** The branch tip that was proven, and pinned in the deletion. */
  tip: string | null;
  /** The bundle the branch was written to before its deletion, and the one command restoring it. */
  bundle: string | null;
  restore: string | null;
  by: CleanupBy;
  simulated: boolean;
  at: string;
}

/** A decision to record: everything but its id, and its time (default now). */
export type NewCleanupRecord = Omit<CleanupRecord, "id" | "at"> & { at?: string };

/** Records a decision; returns it as stored. */
export function recordCleanup(store: Store, record: NewCleanupRecord): CleanupRecord {
  const result = store.statement(
    `INSERT INTO cleanups (item, state, reason, worktree_path, branch, worktree, branch_outcome, proof, tip, bundle, restore, by, simulated, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    record.item, record.state, record.reason, record.worktree_path, record.branch, record.worktree, record.branch_outcome,
    record.proof, record.tip, record.bundle, record.restore, record.by, record.simulated ? 1 : 0, record.at ?? isoSeconds(now()),
  );
  return fromRow(store.statement("SELECT * FROM cleanups WHERE id = ?").get(Number(result.lastInsertRowid)));
}

/** The item's latest decision: its cleanup state, or undefined when none was made. */
export function latestCleanup(store: Store, item: number): CleanupRecord | undefined {
  const row = store.statement("SELECT * FROM cleanups WHERE item = ? ORDER BY id DESC LIMIT 1").get(item);
  return row ? fromRow(row) : undefined;
}

/** Every decision about an item, oldest first. */
export function cleanupsOf(store: Store, item: number): CleanupRecord[] {
  return store.statement("SELECT * FROM cleanups WHERE item = ? ORDER BY id").all(item).map(fromRow);
}

/** Whether a decision left the item's worktree directory gone (removed, or found already gone). */
export function worktreeGone(record: CleanupRecord | undefined): boolean {
  return record !== undefined && (record.state === "done" || record.state === "branch_retained");
}

function fromRow(row: unknown): CleanupRecord {
  const r = row as Record<string, unknown>;
  return { ...(r as unknown as CleanupRecord), simulated: r.simulated === 1 };
}
