/**
 * Setup `forge-with-stopped-worker-changed-settings`: `forge-with-worker`, demo/widgets
 * onboarded and one daemon tick run at live, so issue 1 was dispatched into its worktree;
 * then its worker was killed, and demo/widgets made private on the forge, so the settings
 * GitHub reports no longer match the fingerprint the owner approved. The worktree and
 * branch remain, ready for `resume` or `restart`.
 */
import { findRepo, loadForgeData, saveForgeData } from "../../forge/state.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Dispatches issue 1, stops its worker, then changes the repository's visibility. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    for (const argv of [["run", "--once", "--effect-level", "live"], ["session", "kill", "ra-widgets-1"]]) {
      await mustRun(ctx, argv, { cwd: made.cwd, env: made.env });
    }
    // The forge reads its state file again when it changes on disk.
    const data = loadForgeData(made.vars!.FORGE_DIR);
    findRepo(data, "demo", "widgets")!.private = true;
    saveForgeData(made.vars!.FORGE_DIR, data);
  });
}
