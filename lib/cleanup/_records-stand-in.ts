/**
 * integration: replace with lib/cleanup/records.ts (latestCleanup, CleanupState), then
 * delete this file. Until the `cleanups` table exists no item has a cleanup record.
 */
import type { Store } from "../store/open.ts";

/** An item's cleanup state. */
export type CleanupState = "done" | "branch_retained" | "retained" | "skipped";

/** The latest cleanup decision of an item. */
export function latestCleanup(_store: Store, _item: number): { state: CleanupState; worktree: "removed" | "absent" | "kept" | "simulated" } | undefined {
  return undefined;
}
