/**
 * Setup `forge-with-notify-limit`: `forge-with-notify-receivers` with
 * `[notifications] max_per_cycle = 2`, and four directories in the worktree root that no
 * item claims (`<state>/worktrees/demo/widgets/stray-1` to `stray-4`): the next tick at
 * live raises four `orphan_worktree` anomalies and dispatches issue 1, five events in one
 * pass.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { withNotifyReceivers } from "./forge-with-notify-receivers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The receivers, the limit, and the four stray directories. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await withNotifyReceivers(ctx, { notifications: ["max_per_cycle = 2"] });
  for (const n of [1, 2, 3, 4]) mkdirSync(join(ctx.env.RA_STATE_DIR, "worktrees", "demo", "widgets", `stray-${n}`), { recursive: true });
  return made;
}
