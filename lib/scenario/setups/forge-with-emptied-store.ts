/**
 * Setup `forge-with-emptied-store`: `forge-with-worker`, demo/widgets onboarded and one
 * daemon tick run at live, so issue 1 was dispatched and its worker still runs; then the
 * database lost its contents (truncated to 0 bytes, its WAL gone), as a full disk or a bad
 * copy can leave it. The worktree, the session records and the running worker remain.
 */
import { rmSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { mustRun } from "./episode-repo.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Dispatches issue 1 and leaves its worker running, then empties the store. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    await mustRun(ctx, ["run", "--once", "--effect-level", "live"], { cwd: made.cwd, env: made.env });
    const store = join(ctx.env.RA_STATE_DIR, "robot-army.db");
    for (const suffix of ["-wal", "-shm"]) rmSync(`${store}${suffix}`, { force: true });
    truncateSync(store, 0);
  });
}
