/** `retry`: a failed work item goes back to `ready`, so dispatch gives it a fresh start. */
import { PreconditionError } from "../../errors.ts";
import type { Store } from "../../store/open.ts";
import type { WorkItem } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { requireItem } from "../../work-items/argument.ts";

/** Moves a failed item to `ready` (audited as `state.work_item`); any other state refuses. */
export function retryItem(store: Store, itemId: number): WorkItem {
  const item = requireItem(store, itemId);
  if (item.state !== "failed") {
    throw new PreconditionError(`Work item ${itemId} is ${item.state}, not failed; retry only puts a failed item back in the queue`);
  }
  return transition(store, itemId, "ready", { reason: "retried by the owner", details: { failure: item.reason } });
}
