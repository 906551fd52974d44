/**
 * Setup `forge-with-tmux-demo-worker`: `forge-with-tmux-worker` whose worker is the demo worker
 * (scripts/demo-worker.ts): at live it commits, pushes and opens a pull request that closes its
 * issue, then waits at its prompt, where it takes what is typed (feedback among it) as an agent
 * does. For the scenarios of review coming back to the worker.
 */
import { DEMO_WORKER } from "./_demo-workers.ts";
import { withTmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge, the clone, and the demo worker launched in tmux. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withTmuxWorker(ctx, DEMO_WORKER);
}
