/**
 * Setup `forge-with-cleanup-on-merged-demo-worker`: `forge-with-merged-demo-worker` with
 * `[cleanup] on_issue_close = true`: the demo worker for issue 1 idle at its prompt, its pull
 * request merged (a merge commit) by the owner, and the daemon's pass set to reclaim done
 * items' worktrees and branches.
 */
import { cleanupOn } from "./_cleanup.ts";
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withIdleDemoWorkers(ctx, { issues: 1, configLines: cleanupOn(), owner: mergeAll });
}
