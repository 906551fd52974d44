/**
 * An item whose worker exited 0 follows its pull requests as the last refresh stored them
 * (the tick's pull request step, after the refresh): an `awaiting_review` item none of whose
 * pull requests is open or merged any more (the owner closed it unmerged) is `interrupted`;
 * an `interrupted` item whose newest worker exited 0 is `awaiting_review` once a pull
 * request of it is open (one not yet seen when the exit was read, or one reopened). A merged
 * pull request moves nothing here: the issue it closes makes the item `done` on the poll,
 * the only writer of `done`, as for an active item. Pull requests not checked move nothing.
 * Read from the stored state each pass, not from what changed, so a crash between a refresh
 * and this step loses nothing.
 */
import type { Store } from "../store/open.ts";
import { getItem, listItems } from "../work-items/queries.ts";
import type { WorkItemState } from "../work-items/queries.ts";
import { latestSession } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";
import { pullRequestsOf } from "./pull-requests.ts";

/** An item a change of its pull requests moved: from where, to where, and why. */
export interface ReviewMove {
  item: number;
  from: WorkItemState;
  to: WorkItemState;
  reason: string;
}

/** Moves every item awaiting review, or interrupted after its worker exited 0, as its pull requests now say; returns what moved, by item. */
export function followPullRequests(store: Store): ReviewMove[] {
  const moves: ReviewMove[] = [];
  for (const item of listItems(store, { states: ["awaiting_review", "interrupted"], includeSimulated: true })) {
    if (item.state === "interrupted" && !exitedZero(store, item.id)) continue;
    const move = store.transaction(() => followOne(store, item.id));
    if (move) moves.push(move);
  }
  return moves;
}

function followOne(store: Store, itemId: number): ReviewMove | undefined {
  // Read again inside the transaction: a verb may have moved it since the list was read.
  const item = getItem(store, itemId);
  const pulls = pullRequestsOf(store, itemId);
  if (!item || pulls === "not checked") return undefined;
  const open = pulls.find((pull) => pull.state === "open" && pull.merged_at === null);
  const merged = pulls.some((pull) => pull.merged_at !== null);
  let to: WorkItemState | undefined;
  let reason = "";
  if (item.state === "awaiting_review" && !open && !merged) {
    const closed = pulls.at(-1);
    to = "interrupted";
    reason = closed ? `pull request #${closed.number} was closed unmerged` : "its pull request is gone";
  } else if (item.state === "interrupted" && open && exitedZero(store, itemId)) {
    to = "awaiting_review";
    reason = `pull request #${open.number} is open; its worker had exited 0`;
  }
  if (!to) return undefined;
  transition(store, itemId, to, { reason, details: { pull_request: open?.number ?? pulls.at(-1)?.number ?? null } });
  return { item: itemId, from: item.state, to, reason };
}

/** Whether the item's newest session ended by its worker exiting 0 (not killed, lost or cancelled). */
function exitedZero(store: Store, itemId: number): boolean {
  const session = latestSession(store, itemId);
  return session !== undefined && session.ended_at !== null && session.end_reason === "exited" && session.exit_code === 0;
}
