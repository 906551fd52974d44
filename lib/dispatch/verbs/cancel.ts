/**
 * `cancel`: stops the session working on an item, after the owner typed the item's id to
 * confirm. Giving up (no stdin, Ctrl-C at the question, a wrong answer) signals nothing and
 * leaves a `session.cancel` audit record saying which session it reached for and how it
 * gave up. A confirmed cancel signals only that session's own process tree (its child,
 * known by pid and start time, through stopSession), closes the session row as
 * `cancelled` and makes an unfinished item `interrupted`: its work can be resumed, or
 * given up with `abandon`. A `done` or `abandoned` item stays as it is.
 *
 * It reports only what it did and observed: a session that had already ended on its own
 * is not signalled, and its row is closed from its own exit record (the session's record,
 * else the exit spool), with the ending that record holds.
 */
import { join } from "node:path";
import { PreconditionError } from "../../errors.ts";
import { appendAudit, auditEffect } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { readRecord } from "../../sessions/records.ts";
import { exitOf, readSpooledExit, spoolFiles } from "../../sessions/spool.ts";
import type { Exit } from "../../sessions/spool.ts";
import { stopSession } from "../../sessions/stop.ts";
import { getItem } from "../../work-items/queries.ts";
import type { WorkItem, WorkItemState } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { endSession, sessionsOf } from "../../work-items/sessions.ts";
import { closeFromExit, exitReason, LOST_REASON } from "../../work-items/worker-ended.ts";
import { requireItem } from "../../work-items/argument.ts";

/** How the confirmation went: typed right, or how it gave up. */
export type Confirmation = "confirmed" | "no stdin" | "interrupted" | "answer did not match";

/** What cancel reached for: the item and its open session. */
export interface CancelTarget {
  item: WorkItem;
  session: { id: string; name: string; host: string };
}

/** Where cancel looks: the session root, the exit spool, and this host (a session on another can only be cancelled there). */
export interface CancelDeps {
  sessionRoot: string;
  spoolDir: string;
  host: string;
}

/** What cancel did and found, and where it left the item. */
export interface CancelResult {
  /** `stopped`: cancel signalled the session and it ended; `had-ended`: it had ended on its own; `no-exit-record`: it is gone and nothing says how it ended. */
  did: "stopped" | "had-ended" | "no-exit-record";
  /** How the session had ended, from its exit record (`worker exited (code 0)`); null when cancel stopped it or no record says. */
  ending: string | null;
  /** What the session row was closed as. */
  endReason: string;
  /** The item's state before cancel and after it. */
  before: WorkItemState;
  after: WorkItemState;
}

/** States a cancelled session's item leaves for `interrupted`; `done` and `abandoned` (and the rest) stay as they are. */
const INTERRUPTIBLE: readonly WorkItemState[] = ["active", "awaiting_review", "dispatching"];

/** The item's open session; an item without one refuses. */
export function cancelTarget(store: Store, id: number): CancelTarget {
  const item = requireItem(store, id);
  const session = sessionsOf(store, id).filter((s) => s.ended_at === null).at(-1);
  if (!session) throw new PreconditionError(`Work item ${id} has no open session to cancel (state ${item.state})`);
  return { item, session: { id: session.id, name: session.name, host: session.host } };
}

/** Records that cancel gave up before signalling anything. */
export function recordGaveUp(store: Store, target: CancelTarget, how: Exclude<Confirmation, "confirmed">): void {
  appendAudit(store, {
    kind: "session.cancel", repo: target.item.repo, item: target.item.id, sessionId: target.session.id,
    body: { session: target.session.name, gave_up: how, signalled: false },
  });
}

/**
 * Stops the session (intent and outcome audited) and closes its row as `cancelled`, or,
 * when it had already ended, closes the row from its exit record and signals nothing.
 */
export async function cancelSession(store: Store, deps: CancelDeps, target: CancelTarget): Promise<CancelResult> {
  const before = getItem(store, target.item.id)!.state;
  if (target.session.host !== deps.host) {
    throw new PreconditionError(`Session "${target.session.name}" of work item ${target.item.id} runs on host ${target.session.host}, not here (${deps.host}); run cancel there. Nothing was signalled`);
  }
  // By the row's id only: names are not unique across stores, and a record that cannot be read refuses.
  const record = readOwnRecord(deps.sessionRoot, target);
  if (!record?.exitedAt) {
    const result = record
      ? await auditEffect(
        store,
        { kind: "session.cancel", repo: target.item.repo, item: target.item.id, sessionId: target.session.id, body: { session: target.session.name } },
        async () => await stopSession(deps.sessionRoot, record),
        (outcome) => ({ result: outcome }),
      )
      : "not-running" as const;
    if (result === "stopped") {
      store.transaction(() => {
        endSession(store, target.session.id, "cancelled");
        interrupt(store, target.item.id, "cancelled by the owner", target.session.id);
      });
      return { did: "stopped", ending: null, endReason: "cancelled", before, after: getItem(store, target.item.id)!.state };
    }
  }
  // It was not running when cancel reached it: its own exit record, if one is left, says how it ended.
  const exit = endingOnRecord(deps, target);
  if (exit) {
    const ending = exitReason(exit);
    store.transaction(() => {
      closeFromExit(store, { id: target.session.id, item: target.item.id }, exit);
      appendAudit(store, {
        kind: "session.cancel", repo: target.item.repo, item: target.item.id, sessionId: target.session.id,
        body: { session: target.session.name, already_ended: ending, signalled: false },
      });
    });
    const endReason = sessionsOf(store, target.item.id).find((s) => s.id === target.session.id)!.end_reason!;
    return { did: "had-ended", ending, endReason, before, after: getItem(store, target.item.id)!.state };
  }
  // Gone with no exit record anywhere: what the daemon's settle calls lost.
  store.transaction(() => {
    endSession(store, target.session.id, "lost");
    interrupt(store, target.item.id, LOST_REASON, target.session.id);
    appendAudit(store, {
      kind: "session.cancel", repo: target.item.repo, item: target.item.id, sessionId: target.session.id,
      body: { session: target.session.name, already_ended: "no exit record", signalled: false },
    });
  });
  return { did: "no-exit-record", ending: null, endReason: "lost", before, after: getItem(store, target.item.id)!.state };
}

/** What cancel did, in one line: only what it did and observed, and the item's real state after it. */
export function describeCancel(session: string, item: number, result: CancelResult): string {
  const state = result.after === result.before ? `stays ${result.after}` : `is ${result.after}`;
  if (result.did === "stopped") return `cancelled session ${session} of work item ${item}; the item ${state}`;
  const found = result.did === "had-ended"
    ? `had already ended: ${result.ending}`
    : "had already ended, and no exit record says how";
  return `session ${session} of work item ${item} ${found}. Nothing was signalled; its row is closed as ${result.endReason} and the item ${state}`;
}

function readOwnRecord(sessionRoot: string, target: CancelTarget) {
  try {
    return readRecord(sessionRoot, target.session.id);
  } catch (error) {
    throw new PreconditionError(`${(error as Error).message}; nothing was signalled ("robot-army session ls" lists the record as unreadable)`);
  }
}

function interrupt(store: Store, item: number, reason: string, session: string): void {
  if (INTERRUPTIBLE.includes(getItem(store, item)!.state)) transition(store, item, "interrupted", { reason, details: { session } });
}

/** The session's exit as its own record holds it, else as its holder spooled it (the record reaped at exit); undefined when neither says. */
function endingOnRecord(deps: CancelDeps, target: CancelTarget): Exit | undefined {
  const record = readOwnRecord(deps.sessionRoot, target);
  if (record?.exitedAt) return exitOf(record);
  const spooled = spoolFiles(deps.spoolDir).filter((name) => name.startsWith(`${target.session.id}.`)).at(-1);
  if (!spooled) return undefined;
  const file = join(deps.spoolDir, spooled);
  const exit = readSpooledExit(file);
  // An exit record that cannot be read still says the session ended; how, nobody can tell here.
  if (exit?.session_id !== target.session.id || typeof exit.ended !== "string") {
    throw new PreconditionError(`The exit record "${file}" of session "${target.session.name}" cannot be read, so how it ended is unknown; nothing was signalled and its row is left open`);
  }
  return exit;
}
