/**
 * Setup `forge-with-closed-issue-worker`: `forge-with-worker` whose worker sleeps
 * `$WORKER_SECONDS` (default 30), demo/widgets onboarded, issue 1 dispatched at live as
 * ra-widgets-1 (item 1), and then issue 1 closed on the forge by its owner while its
 * worker still runs. The next pass finds the issue closed and makes item 1 done; nothing
 * has ended its worker.
 */
import { forgeApi } from "./_forge-intake.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun, withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** A worker that says it works and sleeps `$WORKER_SECONDS`, so a step's env decides how long a worker it dispatches lives. */
export const TIMED_WORKER = { binary: "sh", args: ["-c", 'echo working; sleep "${WORKER_SECONDS:-30}"'] };

/** Onboards, dispatches issue 1, and closes it on the forge. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withWorker(ctx, TIMED_WORKER);
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    const ran = await mustRun(ctx, ["run", "--once", "--effect-level", "live"], { cwd: made.cwd, env: made.env });
    if (!ran.includes("as ra-widgets-1 (item 1)")) throw new Error(`setup: run --once did not dispatch issue 1: ${ran}`);
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { state: "closed" });
  });
}
