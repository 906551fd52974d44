/**
 * `abandon`: the owner gives up on a work item; `abandoned` is terminal. A worker still
 * running for it is left running: the session may be exactly what the owner is about to
 * attach to. `robot-army cancel` is what ends it. Nothing later treats that worker as
 * lost or retires it: settle looks only at active items, retirement only at done ones, and
 * when the worker exits by itself the spool drain closes its row and leaves the item as it is.
 */
import { PreconditionError } from "../../errors.ts";
import { liveness } from "../../processes.ts";
import type { Store } from "../../store/open.ts";
import type { WorkItem } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { liveSessionOf } from "./live-session.ts";
import type { LiveAnswer } from "./live-session.ts";
import { requireItem } from "../../work-items/queries.ts";
import { claimerOf } from "../claim.ts";

/** The reason recorded when the owner gives none. */
export const DEFAULT_ABANDON_REASON = "abandoned by the owner";

/** What abandon did: the item as written, its state before, and what the session root says of its worker. */
export interface Abandoned {
  item: WorkItem;
  before: WorkItem["state"];
  /** The worker left running (or whose running cannot be checked); `live: false` when none runs. */
  worker: LiveAnswer;
}

/** Moves an item to `abandoned` with the reason given (audited as `state.work_item`); a running worker is left running. */
export function abandonItem(store: Store, sessionRoot: string, itemId: number, reason?: string): Abandoned {
  const before = requireItem(store, itemId);
  if (before.state === "done" || before.state === "abandoned") throw new PreconditionError(`Work item ${itemId} is already ${before.state}`);
  if (before.state === "dispatching") refuseWhileClaimed(store, itemId);
  const item = transition(store, itemId, "abandoned", { reason: reason?.trim() || DEFAULT_ABANDON_REASON });
  return { item, before: before.state, worker: liveSessionOf(store, sessionRoot, item.id, null) };
}

/**
 * A dispatch that is still under way would find its item abandoned when it writes the
 * session row, and leave its worker with no row: abandon waits for the claimer to be done.
 * A claim cut short (its claimer proven gone) is abandoned like any other item.
 */
function refuseWhileClaimed(store: Store, itemId: number): void {
  const claimer = claimerOf(store, itemId);
  const state = claimer ? liveness(claimer) : "unknown";
  if (state === "exited") return;
  const who = claimer ? `pid ${claimer.pid}` : "a process not on record";
  const how = state === "running" ? "still runs" : "cannot be checked";
  throw new PreconditionError(
    `Work item ${itemId} is being dispatched: its claimer (${who}) ${how}, so nothing is done; abandon it once the dispatch has finished`,
  );
}

/** What abandon says of the worker it left: named, with the command that ends it; nothing when none runs. */
export function describeLeftWorker(worker: LiveAnswer, item: number): string | null {
  const name = worker.session ? ` ${worker.session.name} (id ${worker.session.id})` : "";
  if (worker.live === true) return `its worker session${name} is still running and is left running; "robot-army cancel ${item}" ends it`;
  if (worker.live === "unknown") {
    const why = worker.unreadable ? `session record "${worker.unreadable}" cannot be read` : `whether session${name} still runs cannot be checked`;
    return `${why}, so a worker of it may still run and is left as it is; "robot-army cancel ${item}" ends one`;
  }
  return null;
}
