/**
 * Setup `forge-with-dashboard-actions`: `forge-with-worker` (a headless worker that prints a
 * line and sleeps), room for three sessions (one per issue, so a worker started again never
 * waits for a slot another issue took), and `[daemon] effect_level = "live"`: the level the
 * dashboard's buttons act at, as a daemon running for real would. Its scenarios press the
 * buttons (`press:` steps, on a `robot-army serve` the runner starts).
 */
import { appendFileSync } from "node:fs";
import { SLEEPING_WORKER, withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge, the clone, a headless worker, and the daemon's level live. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withWorker(ctx, { ...SLEEPING_WORKER, maxSessions: 3 });
  appendFileSync(made.vars!.CONFIG, '\n[daemon]\neffect_level = "live"\n');
  return made;
}
