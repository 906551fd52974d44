/**
 * Setup `daemon-stopped`: the daemon was stopped on purpose (SIGTERM) 40 minutes before the
 * scenario's clock: it released its lock and, as it stopped, marked its last heartbeat
 * (tick 12) stopped, as `robot-army run` does on SIGTERM or Ctrl-C.
 */
import { beforeNow, exitedStandIn, inWorkDir, writeBeatOf } from "./_daemon-files.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Leaves no lock and a heartbeat marked stopped. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const gone = await exitedStandIn();
  writeBeatOf(ctx, gone.pid, beforeNow(ctx, 40 * 60_000), 12, { at: beforeNow(ctx, 40 * 60_000), reason: "SIGTERM" });
  return inWorkDir(ctx);
}
