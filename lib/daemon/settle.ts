/**
 * Settling the open session rows, whatever their item's state (a done item's worker that
 * died is settled too, so its slot and its orphan anomaly go): a worker whose managed session is proven gone
 * without an exit record (no record in the session root and none in the spool, or a
 * record the session state calls `vanished` whose command is proven ended too) is `lost`,
 * and its item, when it is still `active`, `interrupted`; one whose own record holds its
 * exit is closed from it, its item moved as the exit says. A worker that outlived its holder still works: it is left
 * for a later tick, like a session whose liveness cannot be known (DESIGN rule 1).
 */
import { readRecord } from "../sessions/records.ts";
import { exitOf, spooledSessions } from "../sessions/spool.ts";
import { workerRuns } from "../sessions/state.ts";
import type { Store } from "../store/open.ts";
import { openSessions } from "../work-items/sessions.ts";
import { closeFromExit, closeLost, LOST_REASON } from "../ending/worker-ended.ts";
import type { DaemonEvent } from "../events.ts";
import { itemOutcome, workerEndedEvent } from "./spool-drain.ts";

/** What one settle pass did. */
export interface SettleResult {
  lost: number;
  /** Closed from the exit the session's own record holds (its spool file already gone). */
  ended: number;
  /** Sessions whose liveness could not be known: left as they are. */
  unknown: number;
  events: DaemonEvent[];
}

/** Where settle looks: the store, the session root, the exit spool, and this host (rows of other hosts cannot be checked here). */
export interface SettleDeps {
  store: Store;
  sessionRoot: string;
  spoolDir: string;
  host: string;
  /**
   * Sessions whose spool file the drain found damaged: their file is no exit record, so
   * settle decides them from their own record, as if nothing were spooled (files set aside
   * are gone from the spool already; this covers one that could not be moved).
   */
  damagedSessions?: readonly string[];
}

/** Settles every open session row on this host. */
export function settleSessions(deps: SettleDeps): SettleResult {
  const { store } = deps;
  const result: SettleResult = { lost: 0, ended: 0, unknown: 0, events: [] };
  const rows = openSessions(store);
  const spooled = spooledSessions(deps.spoolDir);
  for (const row of rows) {
    if (row.host !== deps.host) {
      result.unknown++;
      continue;
    }
    // The spool drain owns a session that has an exit record waiting there.
    if (spooled === undefined || (spooled.has(row.id) && !deps.damagedSessions?.includes(row.id))) continue;
    let record;
    try {
      record = readRecord(deps.sessionRoot, row.id);
    } catch {
      result.unknown++;
      continue;
    }
    if (record?.exitedAt) {
      // Its exit is on record in the session itself: that is evidence, not a guess.
      const exit = exitOf(record);
      const ended = closeFromExit(store, row, exit);
      if (ended) result.events.push(workerEndedEvent(ended, exit));
      result.ended++;
      continue;
    }
    // A worker that outlived its holder still works; one that cannot be checked is left for a later tick.
    const runs = record ? workerRuns(deps.sessionRoot, record) : false;
    if (runs === "unknown") result.unknown++;
    if (runs !== false) continue;
    const lost = closeLost(store, row, LOST_REASON);
    if (!lost) continue;
    result.lost++;
    const outcome = itemOutcome(lost);
    result.events.push({ event: "session_lost", line: `worker of item ${row.item} lost (${row.name}: ${record ? "its holder is gone" : "no session record"} and no exit record): ${outcome}`, item: row.item, session: row.id });
  }
  return result;
}
