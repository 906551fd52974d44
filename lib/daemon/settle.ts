/**
 * Settling the sessions of active items: a worker whose managed session is proven gone
 * without an exit record (no record in the session root and none in the spool, or a
 * record the session state calls `vanished` whose command is proven ended too) is `lost`,
 * and its item `interrupted`. A worker that outlived its holder still works: it is left
 * for a later tick, like a session whose liveness cannot be known (DESIGN rule 1).
 */
import { existsSync, readdirSync } from "node:fs";
import { isoSeconds, now } from "../clock.ts";
import { readRecord } from "../sessions/records.ts";
import { workerRuns } from "../sessions/state.ts";
import type { Store } from "../store/open.ts";
import { transition } from "../work-items/transition.ts";
import type { DaemonEvent } from "./events.ts";
import { closeFromExit, exitOfRecord } from "./spool-drain.ts";

/** The reason a lost worker's item is given. */
export const LOST_REASON = "worker lost: no exit record";

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
}

/** Settles every open session row of an `active` item on this host. */
export function settleSessions(deps: SettleDeps): SettleResult {
  const { store } = deps;
  const result: SettleResult = { lost: 0, ended: 0, unknown: 0, events: [] };
  const rows = store.statement(
    `SELECT s.id, s.item, s.name, s.host, s.ended_at FROM sessions AS s JOIN work_items AS w ON w.id = s.item
     WHERE s.ended_at IS NULL AND w.state = 'active' ORDER BY s.item, s.attempt`,
  ).all().map((row) => ({ ...(row as { id: string; item: number; name: string; host: string; ended_at: null }) }));
  const spooled = spooledSessions(deps.spoolDir);
  for (const row of rows) {
    if (row.host !== deps.host) {
      result.unknown++;
      continue;
    }
    // The spool drain owns a session that has an exit record waiting there.
    if (spooled === undefined || spooled.has(row.id)) continue;
    let record;
    try {
      record = readRecord(deps.sessionRoot, row.id);
    } catch {
      result.unknown++;
      continue;
    }
    if (record?.exitedAt) {
      // Its exit is on record in the session itself: that is evidence, not a guess.
      const event = closeFromExit(store, row, exitOfRecord(record));
      if (event) result.events.push(event);
      result.ended++;
      continue;
    }
    // A worker that outlived its holder still works; one that cannot be checked is left for a later tick.
    const runs = record ? workerRuns(deps.sessionRoot, record) : false;
    if (runs === "unknown") result.unknown++;
    if (runs !== false) continue;
    markLost(store, row);
    result.lost++;
    result.events.push({ event: "session_lost", line: `worker of item ${row.item} lost (${row.name}: ${record ? "its holder is gone" : "no session record"} and no exit record): item interrupted`, item: row.item, session: row.id });
  }
  return result;
}

function markLost(store: Store, row: { id: string; item: number }): void {
  store.transaction(() => {
    store.statement("UPDATE sessions SET ended_at = ?, end_reason = 'lost' WHERE id = ? AND ended_at IS NULL").run(isoSeconds(now()), row.id);
    transition(store, row.item, "interrupted", { reason: LOST_REASON, details: { session: row.id } });
  });
}

/** Session ids with an exit record in the spool; undefined when the spool cannot be read. */
function spooledSessions(dir: string): Set<string> | undefined {
  if (!existsSync(dir)) return new Set();
  try {
    return new Set(readdirSync(dir).filter((n) => n.endsWith(".json") && !n.startsWith(".")).map((n) => n.split(".")[0]));
  } catch {
    return undefined;
  }
}
