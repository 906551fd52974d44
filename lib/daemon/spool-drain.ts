/**
 * Draining the exit spool: each exit record a worker's holder left closes the worker's
 * session row (`exited`, `crashed`, `killed`) and moves its `active` item as the exit says
 * (lib/work-items/exit-verdict.ts: `awaiting_review`, `failed` or `interrupted`). The file is deleted only after the store has it, so a crash in between
 * re-processes it, and the second time changes nothing. A record for a session the store
 * does not know is kept and reported once, never guessed at. A damaged file (unreadable,
 * not JSON, or failing `schema/exit-record.schema.json`) is set aside in `damaged/`, audited
 * as `spool.damaged`, raised as a `spool_damaged` anomaly for the owner, and never stops the rest of the drain; its session, when its name
 * tells one, is left to settle, which decides from the session's own record.
 */
import { raiseAnomaly } from "../store/anomalies.ts";
import { auditEffect } from "../store/audit.ts";
import { removeSpooled, sessionOfSpoolFile, setAsideDamaged, spooledExits } from "../sessions/spool.ts";
import type { SpooledExit } from "../sessions/spool.ts";
import { readRecord } from "../sessions/records.ts";
import { workerRuns } from "../sessions/state.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "../work-items/queries.ts";
import { sessionById } from "../work-items/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import { closeFromExit } from "../ending/worker-ended.ts";
import type { WorkerEnd } from "../ending/worker-ended.ts";
import type { DaemonEvent } from "../events.ts";

/** What one drain did. */
export interface DrainResult {
  processed: number;
  kept: number;
  /** Damaged files set aside in `damaged/`. */
  damaged: number;
  /** The sessions whose spool file is damaged (set aside or not): the drain does not own them, settle does. */
  damagedSessions: string[];
  /** Exits left in the spool because what their command started still runs (or cannot be checked). */
  waiting: number;
  events: DaemonEvent[];
}

/** Whether a session whose exit is spooled left processes its command started running, or unread, and they are not proven gone. */
function stillRunsAfterExit(sessionRoot: string, sessionId: string): boolean {
  let record;
  try {
    record = readRecord(sessionRoot, sessionId);
  } catch {
    return false;
  }
  return record?.membersAtExit !== undefined && workerRuns(sessionRoot, record) !== false;
}

/**
 * Processes every spool file, oldest name first. `reported` remembers the files already
 * reported as kept, so each is reported once per daemon.
 */
export async function drainSpool(store: Store, dir: string, reported: Set<string> = new Set(), sessionRoot?: string): Promise<DrainResult> {
  const result: DrainResult = { processed: 0, kept: 0, waiting: 0, damaged: 0, damagedSessions: [], events: [] };
  for (const spooled of await spooledExits(dir)) {
    const { file, path, exit } = spooled;
    if (!exit) {
      await setAside(store, spooled, reported, result);
      continue;
    }
    const row = sessionById(store, exit.session_id);
    if (!row) {
      result.kept++;
      if (!reported.has(file)) {
        reported.add(file);
        result.events.push({ event: "spool_kept", line: `exit spool: kept ${file}: session ${exit.session_id} (${exit.name}) is not in the store`, file: path, session: exit.session_id });
      }
      continue;
    }
    // An exit its holder recorded while processes the command started still ran (a stop that could not end
    // them: they share a group robot-army did not make) is not the worker's end: its row stays open, its slot
    // held, until they are proven gone; the file waits for a later drain.
    if (sessionRoot !== undefined && stillRunsAfterExit(sessionRoot, exit.session_id)) {
      result.waiting++;
      continue;
    }
    const ended = closeFromExit(store, row, exit);
    if (ended) result.events.push(workerEndedEvent(ended, exit));
    removeSpooled(path);
    result.processed++;
  }
  return result;
}

/**
 * Sets a damaged file aside (audited `spool.damaged`, with its path and what is wrong) and
 * says in one line what becomes of its session: settled from its own record when the file's
 * name tells a session the store knows, else nothing, and the owner is told to look.
 */
async function setAside(store: Store, spooled: SpooledExit, reported: Set<string>, result: DrainResult): Promise<void> {
  const { file, path } = spooled;
  const reason = spooled.problem ?? "it is not an exit record";
  const id = sessionOfSpoolFile(file);
  const row = id ? sessionById(store, id) : undefined;
  if (id) result.damagedSessions.push(id);
  const about = row ? { item: row.item, sessionId: row.id } : {};
  const item = row ? getItem(store, row.item) : undefined;
  let movedTo: string;
  try {
    const moved = await auditEffect(store, { kind: "spool.damaged", ...about, body: { path, reason, session: id ?? null } }, (actionId) => {
      const to = setAsideDamaged(path);
      // Raised before the outcome, once the file is moved: a crash between the two leaves an intent the
      // sweep settles from the file's paths, never a file set aside that the owner is not told of.
      // The owner sees it in `status` and `robot-army anomalies` until acknowledged; one per file set aside.
      // A store that fails here must not make the move, which happened, look failed in its outcome.
      let told = true;
      try {
        raiseAnomaly(store, {
          kind: "spool_damaged", actionId, repo: item?.repo, item: row?.item,
          detail: `exit spool file ${path} was damaged (${reason}) and set aside as ${to}; ${consequence(store, id, row)}`,
        });
      } catch {
        told = false;
      }
      return { to, told };
    }, (done) => ({ moved_to: done.to, owner_told: done.told }));
    movedTo = moved.to;
  } catch (error) {
    result.kept++;
    if (!reported.has(file)) {
      reported.add(file);
      const why = `${reason}, and it could not be set aside (${(error as Error).message})`;
      result.events.push({ event: "spool_kept", line: `exit spool: kept damaged file ${path}: ${why}; ${consequence(store, id, row)}`, file: path, session: id ?? null, reason });
    }
    return;
  }
  result.damaged++;
  result.events.push({
    event: "spool_damaged", line: `exit spool: set aside damaged file ${path} (moved to ${movedTo}): ${reason}; ${consequence(store, id, row)}`,
    file: path, moved_to: movedTo, reason, session: id ?? null, item: row?.item ?? null,
  });
}

/** What becomes of a damaged file's session, told from its name and the store: settle takes the open rows of active items. */
function consequence(store: Store, id: string | undefined, row: StoredSession | undefined): string {
  if (!id) return "its name tells no session, so nothing is settled from it: look at it, then remove it";
  if (!row) return `session ${id}, which its name tells, is not in the store, so nothing is settled from it: look at it, then remove it`;
  if (row.ended_at) return `its session ${id} (${row.name}) had already ended on record; nothing changes`;
  const state = getItem(store, row.item)?.state;
  if (state !== "active") return `its session ${id} (${row.name}) stays open, as its item ${row.item} is ${state ?? "gone"}; nothing is guessed from the file`;
  return `its session ${id} (${row.name}) is settled from its own record`;
}

/** The daemon's `worker_ended` event for a worker's end: what ended, how, and what became of its item. */
export function workerEndedEvent(ended: WorkerEnd, exit: { code: number | null; signal: string | null }): DaemonEvent {
  // Named by how it ended (`worker of item 3 exited (code 1)`), the worker's own name (`worker "claude" ...`) left to the item's reason.
  const how = ended.why.replace(/^worker (".*?" )?/, "");
  return {
    event: "worker_ended", line: `worker of item ${ended.item} ${how}: ${itemOutcome(ended)}`,
    item: ended.item, session: ended.session, end_reason: ended.endReason, code: exit.code, signal: exit.signal,
    interrupted: ended.moved && ended.state === "interrupted", state: ended.state,
  };
}

/** What a worker's end did to its item, in the words of a daemon line: `item failed`, `item stays done`. */
export function itemOutcome(ended: Pick<WorkerEnd, "moved" | "state">): string {
  return ended.moved ? `item ${ended.state}` : `item stays ${ended.state}`;
}
