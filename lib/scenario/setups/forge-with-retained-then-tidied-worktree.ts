/**
 * Setup `forge-with-retained-then-tidied-worktree`: `forge-with-dirty-merged-demo-worker`,
 * then one pass at live that retired the worker (issues 2 and 3 held, so nothing else was
 * dispatched), then `robot-army cleanup 1`, which git refused over the untracked
 * `scratch.txt` (recorded `retained`); then the owner deleted that file. The worktree is
 * clean now, and the record still says `retained`.
 */
import { rmSync } from "node:fs";
import { SETUP_PASS_AT, leaveUntracked, retireNow, worktreeOf } from "./_cleanup.ts";
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import { thenRun } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  let scratch = "";
  const made = await withIdleDemoWorkers(ctx, {
    issues: 1,
    owner: async (api, pulls) => {
      await mergeAll(api, pulls);
      scratch = leaveUntracked(worktreeOf(ctx, 1));
    },
  });
  return await thenRun(made, async () => {
    await retireNow(ctx, made, [2, 3]);
    const refused = await ctx.robotArmy(["cleanup", "1", "--effect-level", "live"], { cwd: made.cwd, env: { ...made.env, RA_NOW: SETUP_PASS_AT } });
    if (refused.code !== 3 || !refused.stdout.includes("retained")) throw new Error(`setup: cleanup 1 was not retained (exit ${refused.code}): ${refused.stdout}${refused.stderr}`);
    rmSync(scratch);
  });
}
