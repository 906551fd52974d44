/**
 * A worker ended: its session row closes with how it ended, and its item, when this was
 * the item's current session and the item is still `active` (or `needs_info`: its worker
 * was waiting for the owner), moves as the exit says (lib/work-items/exit-verdict.ts):
 * `awaiting_review` after exit 0 with a pull request open, `failed` after exit 1, 126 or
 * 127, `interrupted` otherwise. A worker lost (no exit record) or cancelled by the owner
 * interrupts it. Whoever learns of the end (the spool drain, settle, a relaunch closing
 * earlier rows, cancel) calls one of these functions, so every path writes the same row
 * and the same transition. An exit within seconds of the start also keeps the worker's last
 * output lines (lib/work-items/quick-exit.ts).
 */
import { pullRequestsOf } from "../intake/pull-requests.ts";
import { queryAudit } from "../store/audit.ts";
import type { Exit } from "../sessions/spool.ts";
import type { Store } from "../store/open.ts";
import { exitVerdict } from "../work-items/exit-verdict.ts";
import type { ExitVerdict } from "../work-items/exit-verdict.ts";
import { getItem } from "../work-items/queries.ts";
import { recordQuickExit } from "../work-items/quick-exit.ts";
import type { WorkItemState } from "../work-items/queries.ts";
import { endSession, latestSession } from "../work-items/sessions.ts";
import type { EndReason } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";

/** The reason a lost worker's item is given. */
export const LOST_REASON = "worker lost: no exit record";

/** What a worker's end did: the row's reason, the item's reason, and whether the item moved. */
export interface WorkerEnd {
  item: number;
  session: string;
  endReason: EndReason;
  /** `worker exited (code 1)`, `worker ended by SIGTERM`, ...: the item's reason. */
  why: string;
  /** Whether the item moved (to `state`); false when it stays as it was. */
  moved: boolean;
  /** The item's state afterwards. */
  state: WorkItemState;
}

/** How a session's `ended` maps to the session row's end reason. */
const END_REASON: Record<string, EndReason> = { exited: "exited", crashed: "crashed", killed: "killed", "failed-to-start": "crashed", abandoned: "exited" };

/**
 * Closes a session row from how its worker ended, and moves the item as the exit says
 * (exitVerdict: read with the pull requests of the item's branches) when this was its
 * current session and it is still `active` or `needs_info`. Idempotent: a row already
 * closed changes nothing, and null says so.
 */
export function closeFromExit(store: Store, session: { id: string; item: number }, exit: Exit): WorkerEnd | null {
  const ended = END_REASON[exit.ended] ?? "exited";
  // Killed while its retirement, cut short by a crash, was under way: the retirement's signal, not an outside kill.
  const endReason = ended === "killed" && retirementUnderWay(store, session) ? "retired" : ended;
  return store.transaction(() => {
    if (!endSession(store, session.id, endReason, { code: exit.code, at: exit.at })) return null;
    // An end within seconds of the start keeps the worker's last lines, so it is never reported silently.
    recordQuickExit(store, { ...session, simulated: getItem(store, session.item)?.simulated }, exit);
    return moveIfCurrent(store, session, endReason, exitVerdict(exit, pullRequestsOf(store, session.item)));
  });
}

/** Whether a retirement of the session has an intent and no outcome yet: it was signalling the worker when it was cut short. */
function retirementUnderWay(store: Store, session: { id: string; item: number }): boolean {
  const records = queryAudit(store, { kind: "session.retire", item: session.item }).filter((r) => r.sessionId === session.id);
  return records.some((intent) => intent.phase === "intent" && !records.some((r) => r.phase === "outcome" && r.actionId === intent.actionId));
}

/** Closes the row of a worker proven gone with no exit record as `lost`, and interrupts its item as closeFromExit does. */
export function closeLost(store: Store, session: { id: string; item: number }, why: string): WorkerEnd | null {
  return store.transaction(() => {
    if (!endSession(store, session.id, "lost")) return null;
    return moveIfCurrent(store, session, "lost", { to: "interrupted", why });
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
    return moveIfCurrent(store, session, "cancelled", { to: "interrupted", why }, CANCEL_INTERRUPTS);
  });
}

/** The states a worker that ended by itself moves: its work was under way, or waited for the owner's answer. */
const WORKER_END_MOVES: readonly WorkItemState[] = ["active", "needs_info"];

/** The states an owner's cancel interrupts: those, and an item awaiting review or still being dispatched. */
const CANCEL_INTERRUPTS: readonly WorkItemState[] = [...WORKER_END_MOVES, "awaiting_review", "dispatching"];

function moveIfCurrent(store: Store, session: { id: string; item: number }, endReason: EndReason, verdict: ExitVerdict, states: readonly WorkItemState[] = WORKER_END_MOVES): WorkerEnd {
  const item = getItem(store, session.item)!;
  // Only the end of the item's newest session moves it: an older one ending says nothing of the work now.
  const move = latestSession(store, item.id)?.id === session.id && states.includes(item.state);
  const state = move ? transition(store, item.id, verdict.to, { reason: verdict.why, details: { session: session.id } }).state : item.state;
  return { item: item.id, session: session.id, endReason, why: verdict.why, moved: move, state };
}
