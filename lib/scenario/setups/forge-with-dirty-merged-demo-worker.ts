/**
 * Setup `forge-with-dirty-merged-demo-worker`: `forge-with-merged-demo-worker` (the demo
 * worker for issue 1 idle at its prompt, its pull request merged) where the owner, checking
 * the work, left one untracked file in the worktree (`scratch.txt`); nothing else in it
 * changed. The daemon's cleanup is off (the default).
 */
import { leaveUntracked, worktreeOf } from "./_cleanup.ts";
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withIdleDemoWorkers(ctx, {
    issues: 1,
    owner: async (api, pulls) => {
      await mergeAll(api, pulls);
      leaveUntracked(worktreeOf(ctx, 1));
    },
  });
}
