/**
 * Setup `daemon-starting`: a live process holds the state dir's daemon lock, taken 30
 * seconds before the scenario's clock, and has written no heartbeat yet: a daemon still in
 * its first tick. The process is stopped when the scenario ends.
 */
import { beforeNow, inWorkDir, startStandIn, writeLockOf } from "./_daemon-files.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Starts the stand-in daemon and writes its lock. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const daemon = startStandIn();
  writeLockOf(ctx, daemon.who, beforeNow(ctx, 30_000));
  return inWorkDir(ctx, daemon.stop);
}
