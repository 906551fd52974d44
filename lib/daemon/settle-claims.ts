/**
 * Settling claims cut short: an item stays `dispatching` only while the process that
 * claimed it (the daemon, or `resume` / `restart` from the command line) works on it.
 * Each claim records that process's pid and start time. When that process is proven gone
 * and the item is still `dispatching`, its dispatch was cut short (a crash, a kill, a
 * power cut) somewhere between the claim and the session row: the item becomes
 * `interrupted`, so `resume`, `restart`, `retry` or `reset` can take it on. Nothing is
 * guessed: a claimer that cannot be checked, or a claim that names none, leaves the item
 * as it is (DESIGN rule 1). A worker session tagged for the item that still runs is named
 * in the reason, so the owner can look at it or end it, and is never signalled here.
 */
import { claimerOf } from "../dispatch/claim.ts";
import { liveSessionOf } from "../dispatch/verbs/live-session.ts";
import { liveness } from "../processes.ts";
import type { Store } from "../store/open.ts";
import { getItem, listItems } from "../work-items/queries.ts";
import { transition } from "../work-items/transition.ts";
import type { DaemonEvent } from "./events.ts";

/** What one pass over the claims did. */
export interface ClaimsResult {
  /** Items whose claimer is proven gone: now interrupted. */
  cutShort: number;
  /** Items whose claimer cannot be checked or is not on record: left dispatching. */
  unknown: number;
  events: DaemonEvent[];
}

/** Interrupts every `dispatching` item whose claimer is proven gone. */
export function settleClaims(deps: { store: Store; sessionRoot: string }): ClaimsResult {
  const result: ClaimsResult = { cutShort: 0, unknown: 0, events: [] };
  for (const item of listItems(deps.store, { states: ["dispatching"], includeSimulated: true })) {
    const claimer = claimerOf(deps.store, item.id);
    const state = claimer ? liveness(claimer) : "unknown";
    if (state === "running") continue;
    if (state === "unknown") {
      result.unknown++;
      continue;
    }
    const live = liveSessionOf(deps.store, deps.sessionRoot, item.id, null);
    const session = live.live !== false && live.session ? live.session : null;
    const still = session
      ? `; session "${session.name}" tagged for it ${live.live === true ? "still runs" : "cannot be checked"}`
      : live.live === "unknown" ? `; whether a worker runs for it cannot be checked (${unreadable(live.unreadable)})` : "";
    const reason = `its dispatch was cut short: the process that claimed it (pid ${claimer!.pid}) ended before its worker was recorded${still}`;
    // Only while it is still dispatching: an owner's abandon in the meantime stands.
    const moved = deps.store.transaction(() => {
      if (getItem(deps.store, item.id)?.state !== "dispatching") return false;
      transition(deps.store, item.id, "interrupted", { reason, details: { claimed_by: claimer, session: session?.id ?? null } });
      return true;
    });
    if (!moved) continue;
    result.cutShort++;
    const next = session
      ? `look at it with "robot-army session peek ${session.name}" or end it with "robot-army session kill ${session.name}", then resume or restart`
      : live.live === "unknown"
        ? `${unreadable(live.unreadable)}, so whether a worker runs for it is not known`
        : `"robot-army resume ${item.id}", "restart", "retry" or "reset" take it on`;
    result.events.push({
      event: "claim_cut_short",
      line: `dispatch of ${item.repo}#${item.issue} (item ${item.id}) was cut short (pid ${claimer!.pid} ended): item interrupted; ${next}`,
      item: item.id, session: session?.id ?? null,
    });
  }
  return result;
}

/** What could not be read: one session record, named, or the session root itself. */
function unreadable(record: string | undefined): string {
  return record ? `session record "${record}" cannot be read` : "the session root cannot be read";
}
