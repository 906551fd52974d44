/**
 * A worker ended: its session row closes with how it ended, and its item, when this was
 * the item's current session and the item is still `active` (or `needs_info`: its worker
 * was waiting for the owner), is `interrupted`. Whoever
 * learns of the end (the spool drain, settle, a relaunch closing earlier rows) calls this
 * one function, so every path writes the same row and the same transition.
 */
import type { Exit } from "../sessions/spool.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "./queries.ts";
import type { WorkItemState } from "./queries.ts";
import { endSession, latestSession } from "./sessions.ts";
import type { EndReason } from "./sessions.ts";
import { transition } from "./transition.ts";

/** The reason a lost worker's item is given. */
export const LOST_REASON = "worker lost: no exit record";

/** What a worker's end did: the row's reason, the item's reason, and whether the item was interrupted. */
export interface WorkerEnd {
  item: number;
  session: string;
  endReason: EndReason;
  /** `worker exited (code N)`, `worker crashed (SIGNAL)`, ...: the item's reason. */
  why: string;
  interrupted: boolean;
  /** The item's state afterwards. */
  state: WorkItemState;
}

/** How a session's `ended` maps to the session row's end reason. */
const END_REASON: Record<string, EndReason> = { exited: "exited", crashed: "crashed", killed: "killed", "failed-to-start": "crashed", abandoned: "exited" };

/**
 * Closes a session row from how its worker ended, and interrupts the item when this was
 * its current session and it is still `active` or `needs_info`. Idempotent: a row already closed changes
 * nothing, and null says so.
 */
export function closeFromExit(store: Store, session: { id: string; item: number }, exit: Exit): WorkerEnd | null {
  const endReason = END_REASON[exit.ended] ?? "exited";
  const why = exitReason(exit);
  return store.transaction(() => {
    if (!endSession(store, session.id, endReason, { code: exit.code, at: exit.at })) return null;
    return interruptIfCurrent(store, session, endReason, why);
  });
}

/** Closes the row of a worker proven gone with no exit record as `lost`, and interrupts its item as closeFromExit does. */
export function closeLost(store: Store, session: { id: string; item: number }, why: string): WorkerEnd | null {
  return store.transaction(() => {
    if (!endSession(store, session.id, "lost")) return null;
    return interruptIfCurrent(store, session, "lost", why);
  });
}

/**
 * Closes the row of a session the owner stopped (`cancel`) as `cancelled`, and interrupts its
 * item when this was its current session and its work is unfinished (active, waiting for
 * the owner, awaiting review, or still being dispatched). Null when the row had already closed: its first ending stands.
 */
export function closeCancelled(store: Store, session: { id: string; item: number }, why: string): WorkerEnd | null {
  return store.transaction(() => {
    if (!endSession(store, session.id, "cancelled")) return null;
    return interruptIfCurrent(store, session, "cancelled", why, CANCEL_INTERRUPTS);
  });
}

/** `worker exited (code N)`, `worker crashed (SIGNAL)`, `worker was killed`: the item's reason. */
export function exitReason(exit: Pick<Exit, "ended" | "code" | "signal">): string {
  if (exit.ended === "killed") return "worker was killed";
  if (exit.ended === "failed-to-start") return "worker failed to start";
  if (exit.ended === "crashed" || (exit.code === null && exit.signal)) return `worker crashed (${exit.signal ?? "unknown signal"})`;
  return `worker exited (code ${exit.code ?? "unknown"})`;
}

/** The states a worker that ended by itself interrupts: its work was under way, or waited for the owner's answer. */
const WORKER_END_INTERRUPTS: readonly WorkItemState[] = ["active", "needs_info"];

/** The states an owner's cancel interrupts: those, and an item awaiting review or still being dispatched. */
const CANCEL_INTERRUPTS: readonly WorkItemState[] = [...WORKER_END_INTERRUPTS, "awaiting_review", "dispatching"];

function interruptIfCurrent(store: Store, session: { id: string; item: number }, endReason: EndReason, why: string, states: readonly WorkItemState[] = WORKER_END_INTERRUPTS): WorkerEnd {
  const item = getItem(store, session.item)!;
  // Only the end of the item's newest session interrupts it: an older one ending says nothing of the work now.
  const interrupt = latestSession(store, item.id)?.id === session.id && states.includes(item.state);
  const state = interrupt ? transition(store, item.id, "interrupted", { reason: why, details: { session: session.id } }).state : item.state;
  return { item: item.id, session: session.id, endReason, why, interrupted: interrupt, state };
}
