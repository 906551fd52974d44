/**
 * `cancel`: stops the session working on an item, after the owner typed the item's id to
 * confirm. Giving up (no stdin, Ctrl-C at the question, a wrong answer) signals nothing and
 * leaves a `session.cancel` audit record saying which session it reached for and how it
 * gave up. A confirmed cancel signals only that session's own process tree (its child,
 * known by pid and start time, through stopSession), closes the session row as
 * `cancelled` and makes the item `interrupted`: its work can be resumed, or given up with
 * `abandon`.
 */
import { PreconditionError } from "../../errors.ts";
import { appendAudit, auditEffect } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { readRecord } from "../../sessions/records.ts";
import { stopSession } from "../../sessions/stop.ts";
import { getItem } from "../../work-items/queries.ts";
import type { WorkItem } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { endSession, sessionsOf } from "../../work-items/sessions.ts";
import { requireItem } from "../../work-items/argument.ts";

/** How the confirmation went: typed right, or how it gave up. */
export type Confirmation = "confirmed" | "no stdin" | "interrupted" | "answer did not match";

/** What cancel reached for: the item and its open session. */
export interface CancelTarget {
  item: WorkItem;
  session: { id: string; name: string };
}

/** The item's open session; an item without one refuses. */
export function cancelTarget(store: Store, id: number): CancelTarget {
  const item = requireItem(store, id);
  const session = sessionsOf(store, id).filter((s) => s.ended_at === null).at(-1);
  if (!session) throw new PreconditionError(`Work item ${id} has no open session to cancel (state ${item.state})`);
  return { item, session: { id: session.id, name: session.name } };
}

/** Records that cancel gave up before signalling anything. */
export function recordGaveUp(store: Store, target: CancelTarget, how: Exclude<Confirmation, "confirmed">): void {
  appendAudit(store, {
    kind: "session.cancel", repo: target.item.repo, item: target.item.id, sessionId: target.session.id,
    body: { session: target.session.name, gave_up: how, signalled: false },
  });
}

/** Stops the session (intent and outcome audited), closes its row and interrupts the item. */
export async function cancelSession(store: Store, sessionRoot: string, target: CancelTarget): Promise<"stopped" | "not-running"> {
  // By the row's id only: names are not unique across stores, and a record that cannot be read refuses.
  let record;
  try {
    record = readRecord(sessionRoot, target.session.id);
  } catch (error) {
    throw new PreconditionError(`${(error as Error).message}; nothing was signalled ("robot-army session ls" lists the record as unreadable)`);
  }
  const result = await auditEffect(
    store,
    { kind: "session.cancel", repo: target.item.repo, item: target.item.id, sessionId: target.session.id, body: { session: target.session.name } },
    async () => (record ? await stopSession(sessionRoot, record) : "not-running" as const),
    (outcome) => ({ result: outcome }),
  );
  store.transaction(() => {
    endSession(store, target.session.id, "cancelled");
    const state = getItem(store, target.item.id)!.state;
    if (state === "active" || state === "awaiting_review" || state === "dispatching") {
      transition(store, target.item.id, "interrupted", { reason: "cancelled by the owner", details: { session: target.session.id } });
    }
  });
  return result;
}
