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
 * else the exit spool), with the ending that record holds. A session whose command stopped
 * while processes it started run on in a process group robot-army did not make (a
 * terminal's, which nothing signals) is not reported as ended: its row closes as
 * `cancelled` with a reason naming what still runs, and its kept record is what makes
 * resume and reset take the worktree as busy until they have ended (DESIGN rule 1).
 */
import { PreconditionError } from "../../errors.ts";
import { appendAudit, auditEffect } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { liveness } from "../../processes.ts";
import { readRecord } from "../../sessions/records.ts";
import type { SessionRecord } from "../../sessions/records.ts";
import { exitOf, spooledExitOf } from "../../sessions/spool.ts";
import type { Exit } from "../../sessions/spool.ts";
import { describeStopLeft, stopSession } from "../../sessions/stop.ts";
import { getItem, requireItem } from "../../work-items/queries.ts";
import type { WorkItem, WorkItemState } from "../../work-items/queries.ts";
import { sessionById, sessionsOf } from "../../work-items/sessions.ts";
import { exitReason } from "../../work-items/exit-verdict.ts";
import { closeCancelled, closeFromExit, closeLost, LOST_REASON } from "../../ending/worker-ended.ts";

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
  /**
   * `stopped`: cancel signalled the session and it ended; `left-running`: its command ended,
   * but processes it started run on where nothing signals them; `had-ended`: it had ended on
   * its own; `no-exit-record`: it is gone and nothing says how it ended.
   */
  did: "stopped" | "left-running" | "had-ended" | "no-exit-record";
  /**
   * How the session had ended, from its exit record (`worker exited (code 0)`), or, when it
   * was left running, what still runs; null when cancel stopped it or no record says.
   */
  ending: string | null;
  /** What the session row was closed as. */
  endReason: string;
  /** The item's state before cancel and after it. */
  before: WorkItemState;
  after: WorkItemState;
}


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
  const ended = { id: target.session.id, item: target.item.id };
  const done = (did: CancelResult["did"], ending: string | null): CancelResult =>
    ({ did, ending, endReason: sessionById(store, target.session.id)!.end_reason!, before, after: getItem(store, target.item.id)!.state });
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
    // Stopped: the row closes as cancelled, unless the daemon closed it from the exit record first.
    if (result === "stopped") {
      closeCancelled(store, ended, "cancelled by the owner");
      return done("stopped", null);
    }
    // Its command stopped, but what it started runs on in its worktree: the row closes saying so,
    // and its record (kept) makes resume, reset and dispatch take the worktree as busy until they end.
    if (result === "left-running") {
      const left = describeStopLeft(readOwnRecord(deps.sessionRoot, target) ?? record!);
      closeCancelled(store, ended, `cancelled by the owner: ${left}`);
      return done("left-running", left);
    }
  }
  // It was not running when cancel reached it: its own exit record, if one is left, says how it ended.
  const exit = await endingOnRecord(deps, target, record);
  if (exit) {
    const ending = exitReason(exit);
    store.transaction(() => {
      closeFromExit(store, ended, exit);
      appendAudit(store, {
        kind: "session.cancel", repo: target.item.repo, item: target.item.id, sessionId: target.session.id,
        body: { session: target.session.name, already_ended: ending, signalled: false },
      });
    });
    return done("had-ended", ending);
  }
  // While the owner was asked, the daemon may have drained its exit and closed the row: that ending stands.
  const row = sessionById(store, target.session.id)!;
  if (row.ended_at !== null) return done("had-ended", `its row was closed as ${row.end_reason} meanwhile`);
  // No record and no exit record: lost, as settle would call it, once the worker the row names is proven gone.
  if (row.pid !== null && row.pid !== undefined && liveness({ pid: row.pid, started_at: row.pid_started_at ?? null }) !== "exited") {
    throw new PreconditionError(`Session "${target.session.name}" of work item ${target.item.id} has no record left, but its worker (pid ${row.pid}) is not proven gone; nothing was signalled and its row is left open`);
  }
  store.transaction(() => {
    closeLost(store, ended, LOST_REASON);
    appendAudit(store, {
      kind: "session.cancel", repo: target.item.repo, item: target.item.id, sessionId: target.session.id,
      body: { session: target.session.name, already_ended: "no exit record", signalled: false },
    });
  });
  return done("no-exit-record", null);
}

/** What cancel did, in one line: only what it did and observed, and the item's real state after it. */
export function describeCancel(session: string, item: number, result: CancelResult): string {
  const state = result.after === result.before ? `stays ${result.after}` : `is ${result.after}`;
  if (result.did === "stopped") return `cancelled session ${session} of work item ${item}; the item ${state}`;
  if (result.did === "left-running") {
    return `cancelled session ${session} of work item ${item}: ${result.ending}. ` +
      `Its row is closed as ${result.endReason} and the item ${state}; its worktree is not free until they end`;
  }
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

/** The session's exit as its own record holds it, else as its holder spooled it (the record reaped at exit); undefined when neither says. */
async function endingOnRecord(deps: CancelDeps, target: CancelTarget, record: SessionRecord | undefined): Promise<Exit | undefined> {
  if (record?.exitedAt) return exitOf(record);
  const spooled = await spooledExitOf(deps.spoolDir, target.session.id);
  if (!spooled) return undefined;
  // An exit record that cannot be read still says the session ended; how, nobody can tell here.
  if (!spooled.exit) {
    throw new PreconditionError(`The exit record "${spooled.path}" of session "${target.session.name}" cannot be read, so how it ended is unknown (${spooled.problem}); nothing was signalled and its row is left open`);
  }
  return spooled.exit;
}
