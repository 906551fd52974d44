/**
 * Setup `forge-with-retired-worktree-deleted-by-hand`: two demo workers (issues 1 and 2,
 * two sessions allowed) that opened their pull requests and went idle; the owner merged
 * both; one pass at live retired both workers (issue 3 held, so nothing else was
 * dispatched); then the owner deleted item 2's worktree directory by hand (git's record of
 * it stays). Item 1's worktree is still on disk. The daemon's cleanup is off (the default).
 */
import { rmSync } from "node:fs";
import { SETUP_PASS_AT, worktreeOf } from "./_cleanup.ts";
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withIdleDemoWorkers(ctx, { issues: 2, configLines: ["[daemon]", "max_concurrent_sessions = 2", ""], owner: mergeAll });
  return await thenRun(made, async () => {
    const run = (argv: string[]) => mustRun(ctx, argv, { cwd: made.cwd, env: { ...made.env, RA_NOW: SETUP_PASS_AT } });
    await run(["hold", "3"]);
    const ran = await run(["run", "--once", "--effect-level", "live"]);
    if (!ran.includes("retired ra-widgets-1 of item 1 ") || !ran.includes("retired ra-widgets-2 of item 2 ")) throw new Error(`setup: run --once did not retire both workers: ${ran}`);
    rmSync(worktreeOf(ctx, 2), { recursive: true, force: true });
  });
}
