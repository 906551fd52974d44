/**
 * Setup `forge-with-merged-demo-worker`: the demo worker dispatched for issue 1 at live
 * (one session per repository, so issues 2 and 3 wait), which committed, pushed, opened its
 * pull request (`Closes #1`) and went idle at its prompt; then the owner merged that pull
 * request, which closed issue 1. Nothing has ended the worker. The worker went idle at the
 * scenario's clock, so a step at a later `RA_NOW` sees it idle for that long.
 */
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withIdleDemoWorkers(ctx, { issues: 1, owner: mergeAll });
}
