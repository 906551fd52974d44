/**
 * Setup `forge-with-unpushed-commit-after-merge`: `forge-with-merged-demo-worker`, then one
 * pass at live that retired the worker (issues 2 and 3 held, so nothing else was
 * dispatched); then the owner committed an afterthought on item 1's branch in its worktree
 * and pushed nothing. The worktree is clean; its branch has one commit origin does not have.
 * The daemon's cleanup is off (the default).
 */
import { commitUnpushed, retireNow, worktreeOf } from "./_cleanup.ts";
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import { thenRun } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withIdleDemoWorkers(ctx, { issues: 1, owner: mergeAll });
  return await thenRun(made, async () => {
    await retireNow(ctx, made, [2, 3]);
    commitUnpushed(worktreeOf(ctx, 1), ctx.env.RA_NOW);
  });
}
