/**
 * Setup `daemon-lock-junk`: the state dir's daemon lock holds junk (no pid), as a torn write
 * or a hand edit would leave it, beside a fresh heartbeat.
 */
import { writeFileSync } from "node:fs";
import { lockPath } from "../../daemon/lock.ts";
import { beforeNow, inWorkDir, writeBeatOf } from "./_daemon-files.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Writes a fresh heartbeat and a lock that is not JSON. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  writeBeatOf(ctx, 4242, beforeNow(ctx, 30_000));
  writeFileSync(lockPath(ctx.env.RA_STATE_DIR), "pid=??\n", { mode: 0o600 });
  return inWorkDir(ctx);
}
