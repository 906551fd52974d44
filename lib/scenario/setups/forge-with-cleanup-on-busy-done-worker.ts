/**
 * Setup `forge-with-cleanup-on-busy-done-worker`: `forge-with-closed-issue-worker` with
 * `[cleanup] on_issue_close = true`: issue 1 dispatched at live as ra-widgets-1 (item 1),
 * its worker (sh, which keeps no registry, so it is never known idle) running for five
 * minutes, and issue 1 closed on the forge by its owner. The next pass makes item 1 done
 * while its session row stays open.
 */
import { appendFileSync } from "node:fs";
import { cleanupOn } from "./_cleanup.ts";
import { forgeApi } from "./_forge-intake.ts";
import { TIMED_WORKER } from "./forge-with-closed-issue-worker.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun, withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withWorker(ctx, TIMED_WORKER);
  appendFileSync(made.vars!.CONFIG, cleanupOn().join("\n") + "\n");
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    const ran = await mustRun(ctx, ["run", "--once", "--effect-level", "live"], { cwd: made.cwd, env: { ...made.env, WORKER_SECONDS: "300" } });
    if (!ran.includes("as ra-widgets-1 (item 1)")) throw new Error(`setup: run --once did not dispatch issue 1: ${ran}`);
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { state: "closed" });
  });
}
