/**
 * The one way a work item changes state: `transition()` checks the move is allowed,
 * writes the new state and a `state.work_item` audit record in one transaction. `done`
 * is written only by the pass that observed the issue closed, and `done` and `abandoned`
 * are terminal.
 */
import { isoSeconds, now } from "../clock.ts";
import { PreconditionError } from "../errors.ts";
import { redact } from "../redact.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import type { WorkItem, WorkItemState } from "./queries.ts";
import { requireItem } from "./queries.ts";

/** Where each state may go. `done` and `abandoned` go nowhere. */
export const ALLOWED: Readonly<Record<WorkItemState, readonly WorkItemState[]>> = {
  discovered: ["ready", "abandoned", "done"],
  ready: ["discovered", "dispatching", "abandoned", "done"],
  // Back to ready once its dispatch, cut short, is proven to have started no worker (lib/daemon/never-started.ts).
  dispatching: ["active", "ready", "failed", "interrupted", "abandoned", "done"],
  active: ["awaiting_review", "interrupted", "needs_info", "failed", "abandoned", "done"],
  awaiting_review: ["active", "interrupted", "needs_info", "failed", "abandoned", "done"],
  // Awaiting review again once a pull request of it opens after its worker exited 0 (lib/intake/review.ts).
  interrupted: ["ready", "dispatching", "awaiting_review", "failed", "abandoned", "done"],
  // Back to active once its worker is at work again; as an active item's when its worker ends.
  needs_info: ["active", "awaiting_review", "interrupted", "ready", "failed", "abandoned", "done"],
  failed: ["ready", "abandoned", "done"],
  done: [],
  abandoned: [],
};

/** Why a transition happens, as the audit record keeps it. */
export interface TransitionCause {
  /** Short, for people: "issue closed", "label removed before dispatch", ... */
  reason: string;
  /** Only the pass that saw the issue closed may say so, and only it may write `done`. */
  issueClosedObserved?: boolean;
  /** Extra facts for the audit record's body. */
  details?: Record<string, unknown>;
}

/** Moves an item to `to`; returns the item as written. Refuses a move ALLOWED does not list. */
export function transition(store: Store, itemId: number, to: WorkItemState, cause: TransitionCause): WorkItem {
  return store.transaction(() => {
    const item = requireItem(store, itemId);
    if (!ALLOWED[item.state].includes(to)) {
      throw new PreconditionError(`Work item ${itemId} (${item.repo}#${item.issue}) cannot go from ${item.state} to ${to}`);
    }
    if (to === "done" && !cause.issueClosedObserved) {
      throw new PreconditionError(`Work item ${itemId}: only the pass that observed the issue closed writes done`);
    }
    const at = isoSeconds(now());
    // A reason often quotes a caught error (git, a post-create step, GitHub): no secret in it is kept.
    const reason = redact(cause.reason);
    store.statement("UPDATE work_items SET state = ?, reason = ?, updated_at = ? WHERE id = ?").run(to, reason, at, itemId);
    appendAudit(store, {
      kind: "state.work_item", repo: item.repo, item: item.id, simulated: item.simulated, at,
      body: { issue: item.issue, from: item.state, to, reason, ...cause.details },
    });
    return { ...item, state: to, reason, updated_at: at };
  });
}
