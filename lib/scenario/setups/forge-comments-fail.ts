/**
 * Setup `forge-comments-fail`: `forge-with-worker` whose forge answers the next two
 * comments posted on demo/widgets#1 with 500 Internal Server Error, as GitHub does now
 * and then.
 */
import { forgeApi } from "./_forge-intake.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge, the clone, the worker config, and two failures waiting for issue 1's comments. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  return await thenRun(made, async () => {
    await forgeApi(made).hook("POST", "/_forge/faults", { method: "POST", path: "/repos/demo/widgets/issues/1/comments", status: 500, times: 2 });
  });
}
