/**
 * Setup `daemon-hung`: a live process holds the state dir's daemon lock (taken two hours
 * before the scenario's clock), and its last heartbeat, tick 12, is twenty minutes old:
 * a daemon that runs but has stopped ticking. The process is stopped when the scenario ends.
 */
import { beforeNow, inWorkDir, startStandIn, writeBeatOf, writeLockOf } from "./_daemon-files.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Starts the stand-in daemon and writes its lock and an old heartbeat of it. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const daemon = startStandIn();
  writeLockOf(ctx, daemon.who, beforeNow(ctx, 2 * 3_600_000));
  writeBeatOf(ctx, daemon.who.pid, beforeNow(ctx, 20 * 60_000));
  return inWorkDir(ctx, daemon.stop);
}
