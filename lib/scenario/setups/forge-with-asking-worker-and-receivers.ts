/**
 * Setup `forge-with-asking-worker-and-receivers`: `forge-with-demo-worker-worktree` (the
 * demo worker idle at its prompt on issue 1, the steps run in its worktree) with both
 * notification channels pointed at loopback imitations of their services and
 * `[notifications] events = ["failure", "needs_info"]`, the defaults. Variables as
 * `forge-with-notify-receivers` gives them (`${RECEIVED}`, ...).
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { startNotifyReceivers } from "../../testing/notify-receivers.ts";
import { setup as demoWorkerWorktree } from "./forge-with-demo-worker-worktree.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const base = await demoWorkerWorktree(ctx);
  const receivers = await startNotifyReceivers(join(ctx.dir, "notify")).catch(async (error) => {
    await base.cleanup?.();
    throw error;
  });
  appendFileSync(base.vars!.CONFIG, [receivers.configToml, "[notifications]", 'events = ["failure", "needs_info"]', ""].join("\n"));
  return {
    ...base,
    vars: { ...base.vars, RECEIVED: receivers.receivedDir },
    placeholders: { ...base.placeholders, [new URL(receivers.webhookUrl).host]: "<webhook>", [new URL(receivers.pushoverUrl).host]: "<pushover>" },
    cleanup: async () => {
      try {
        await base.cleanup?.();
      } finally {
        await receivers.close();
      }
    },
  };
}
