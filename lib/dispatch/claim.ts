/**
 * Who claimed an item: every move to `dispatching` records the pid and start time of the
 * process making it (the daemon, or `resume` / `restart`), so that a claim cut short by a
 * crash can later be told from one still in flight by evidence (lib/daemon/settle-claims.ts).
 */
import { identify } from "../processes.ts";
import type { ProcessIdentity } from "../processes.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";

/** The facts a claim's audit record keeps about this process. */
export function claimDetails(): { claimed_by: ProcessIdentity } {
  return { claimed_by: identify(process.pid) };
}

/**
 * The claim record's mark of a fresh dispatch from the queue (a new worktree and branch from
 * the base), which a resume or restart never carries: only such a claim, cut short before any
 * worker started, goes back to the queue by itself (lib/daemon/never-started.ts).
 */
export const FRESH_CLAIM = "fresh";

/** Who made the item's latest claim, from its `-> dispatching` audit record; undefined when not on record. */
export function claimerOf(store: Store, item: number): ProcessIdentity | undefined {
  const claim = queryAudit(store, { kind: "state.work_item", item }).filter((record) => record.body.to === "dispatching").at(-1);
  const by = claim?.body.claimed_by as Partial<ProcessIdentity> | undefined;
  if (!by || typeof by.pid !== "number" || !Number.isInteger(by.pid)) return undefined;
  return { pid: by.pid, started_at: typeof by.started_at === "string" ? by.started_at : null, start_id: typeof by.start_id === "string" ? by.start_id : null };
}
