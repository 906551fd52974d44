/** The store's rows of work items' worker sessions: one per attempt at an item. */
import { isoSeconds, now } from "../clock.ts";
import type { Store } from "../store/open.ts";

/** A worker session as the store keeps it. */
export interface SessionRow {
  id: string;
  item: number;
  name: string;
  host: string;
  launcher: string;
  marker: string;
  worktree: string;
  branch: string;
  started_at: string;
  simulated: boolean;
  /** The worker's pid and process start time, as its managed session recorded them (null when not known). */
  pid?: number | null;
  pid_started_at?: string | null;
}

/**
 * Records a started session as the item's next attempt, or as `attempt` when the caller
 * numbered it further on (its name is taken on disk, as after a rebuilt database).
 */
export function recordSession(store: Store, row: SessionRow, attempt?: number): void {
  const next = (store.statement("SELECT count(*) AS n FROM sessions WHERE item = ?").get(row.item) as { n: number }).n + 1;
  attempt = Math.max(next, attempt ?? next);
  store.statement(
    `INSERT INTO sessions (id, item, name, host, launcher, marker, worktree, branch, attempt, started_at, simulated, pid, pid_started_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.id, row.item, row.name, row.host, row.launcher, row.marker, row.worktree, row.branch, attempt,
    row.started_at || isoSeconds(now()), row.simulated ? 1 : 0, row.pid ?? null, row.pid_started_at ?? null,
  );
}

/** An item's sessions, oldest first. */
export function sessionsOf(store: Store, item: number): Array<SessionRow & { attempt: number; ended_at: string | null; end_reason: string | null }> {
  return store.statement("SELECT * FROM sessions WHERE item = ? ORDER BY started_at, attempt").all(item)
    .map((row) => {
      const r = { ...(row as Record<string, unknown>) };
      return { ...r, simulated: r.simulated === 1 } as SessionRow & { attempt: number; ended_at: string | null; end_reason: string | null };
    });
}

/** Closes a session row with how it ended; a row already closed keeps its first ending. */
export function endSession(store: Store, id: string, reason: "exited" | "crashed" | "killed" | "retired" | "cancelled" | "lost" | "recovered", exitCode: number | null = null): void {
  store.statement("UPDATE sessions SET ended_at = ?, end_reason = ?, exit_code = ? WHERE id = ? AND ended_at IS NULL")
    .run(isoSeconds(now()), reason, exitCode, id);
}
