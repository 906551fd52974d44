/**
 * Setup `forge-with-rebuilt-store`: `forge-with-worker`, demo/widgets onboarded and one
 * daemon tick run at live, so issue 1 was dispatched into its worktree; then its worker
 * was killed and the database deleted, as when a disk is restored without the state dir's
 * database. The worktree, the branch, the session records and the exit spool remain.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { mustRun } from "./episode-repo.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Dispatches issue 1, stops its worker, then deletes the store. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  const rebuilt = await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    for (const argv of [["run", "--once", "--effect-level", "live"], ["session", "kill", "ra-widgets-1"]]) {
      await mustRun(ctx, argv, { cwd: made.cwd, env: made.env });
    }
    for (const suffix of ["", "-wal", "-shm"]) rmSync(join(ctx.env.RA_STATE_DIR, `robot-army.db${suffix}`), { force: true });
  });
  return rebuilt;
}
