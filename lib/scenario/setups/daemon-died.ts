/**
 * Setup `daemon-died`: the state dir's daemon lock (taken an hour before the scenario's
 * clock) names a process, by pid and start time, that has since exited, as a daemon killed
 * by the out-of-memory killer leaves it; its last heartbeat, tick 12, is 40 minutes old.
 */
import { beforeNow, exitedStandIn, inWorkDir, writeBeatOf, writeLockOf } from "./_daemon-files.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Records a process that has exited in the lock, with its last heartbeat. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const gone = await exitedStandIn();
  writeLockOf(ctx, gone, beforeNow(ctx, 3_600_000));
  writeBeatOf(ctx, gone.pid, beforeNow(ctx, 40 * 60_000));
  return inWorkDir(ctx);
}
