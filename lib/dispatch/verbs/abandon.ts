/**
 * `abandon`: the owner gives up on a work item; `abandoned` is terminal. A live session
 * working for it refuses: abandoning would leave it running with no item to answer to,
 * so it is cancelled first (`robot-army cancel`).
 */
import { PreconditionError } from "../../errors.ts";
import type { Store } from "../../store/open.ts";
import type { WorkItem } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { describeLive, liveSessionOf } from "./live-session.ts";
import { requireItem } from "../../work-items/argument.ts";

/** The reason recorded when the owner gives none. */
export const DEFAULT_ABANDON_REASON = "abandoned by the owner";

/** Moves an item to `abandoned` with the reason given (audited as `state.work_item`). */
export function abandonItem(store: Store, sessionRoot: string, itemId: number, reason?: string): WorkItem {
  const item = requireItem(store, itemId);
  if (item.state === "done" || item.state === "abandoned") throw new PreconditionError(`Work item ${itemId} is already ${item.state}`);
  const live = liveSessionOf(store, sessionRoot, item.id, null);
  if (live.live !== false) {
    // Cancel ends a session it can name; a record that cannot be read is the owner's to look at.
    throw new PreconditionError(live.unreadable ? describeLive(live, item.id) : `${describeLive(live, item.id)}; "robot-army cancel ${item.id}" ends it first`);
  }
  return transition(store, itemId, "abandoned", { reason: reason?.trim() || DEFAULT_ABANDON_REASON });
}
