/**
 * Setup `heartbeat-from-the-future`: no daemon lock, and a heartbeat from a process that has
 * since exited, stamped thirty days ahead of the scenario's clock (a clock set wrong when it
 * was written, or a file written by hand). Read at face value it would be "just now".
 */
import { beforeNow, exitedStandIn, inWorkDir, writeBeatOf } from "./_daemon-files.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const gone = await exitedStandIn();
  writeBeatOf(ctx, gone.pid, beforeNow(ctx, -30 * 86_400_000));
  return inWorkDir(ctx);
}
