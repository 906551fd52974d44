/**
 * Setup `forge-with-three-slots`: `forge-with-worker` with room for three workers of demo/widgets
 * at once (`max_sessions = 3`), so that what keeps an item from starting is never a slot: the
 * scenarios of work waiting for the issues it depends on.
 */
import { SLEEPING_WORKER, withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge, the clone, and a headless sleeping worker, three at a time. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withWorker(ctx, { ...SLEEPING_WORKER, maxSessions: 3 });
}
