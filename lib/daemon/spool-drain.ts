/**
 * Draining the exit spool: each exit record a worker's holder left closes the worker's
 * session row (`exited`, `crashed`, `killed`) and moves its item from `active` to
 * `interrupted`. The file is deleted only after the store has it, so a crash in between
 * re-processes it, and the second time changes nothing. A record for a session the store
 * does not know is kept and reported once, never guessed at.
 */
import { removeSpooled, spooledExits } from "../sessions/spool.ts";
import type { Store } from "../store/open.ts";
import { sessionById } from "../work-items/sessions.ts";
import { closeFromExit } from "../work-items/worker-ended.ts";
import type { WorkerEnd } from "../work-items/worker-ended.ts";
import type { DaemonEvent } from "./events.ts";

/** What one drain did. */
export interface DrainResult {
  processed: number;
  kept: number;
  events: DaemonEvent[];
}

/**
 * Processes every spool file, oldest name first. `reported` remembers the files already
 * reported as kept, so each is reported once per daemon.
 */
export function drainSpool(store: Store, dir: string, reported: Set<string> = new Set()): DrainResult {
  const result: DrainResult = { processed: 0, kept: 0, events: [] };
  for (const { file, path, exit } of spooledExits(dir)) {
    const row = exit ? sessionById(store, exit.session_id) : undefined;
    if (!exit || !row) {
      result.kept++;
      if (!reported.has(file)) {
        reported.add(file);
        const why = exit ? `session ${exit.session_id} (${exit.name}) is not in the store` : "it cannot be read";
        result.events.push({ event: "spool_kept", line: `exit spool: kept ${file}: ${why}`, file: path, session: exit?.session_id ?? null });
      }
      continue;
    }
    const ended = closeFromExit(store, row, exit);
    if (ended) result.events.push(workerEndedEvent(ended, exit));
    removeSpooled(path);
    result.processed++;
  }
  return result;
}

/** The daemon's `worker_ended` event for a worker's end: what ended, how, and what became of its item. */
export function workerEndedEvent(ended: WorkerEnd, exit: { code: number | null; signal: string | null }): DaemonEvent {
  const outcome = ended.interrupted ? "item interrupted" : `item stays ${ended.state}`;
  return {
    event: "worker_ended", line: `worker of item ${ended.item} ${ended.why.replace(/^worker /, "")}: ${outcome}`,
    item: ended.item, session: ended.session, end_reason: ended.endReason, code: exit.code, signal: exit.signal, interrupted: ended.interrupted,
  };
}
