/**
 * Setup `forge-with-worker`: `forge-with-clone` with a headless worker in the config
 * (`[worker] launcher = "process"`, the worker `sh -c 'echo working; sleep 30'`, one session per repository), so a
 * scenario can dispatch for real. Every worker session still running when the scenario
 * ends is stopped (by its recorded pid and start time) before the forge goes.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { listRecords } from "../../sessions/records.ts";
import { sessionState } from "../../sessions/state.ts";
import { stopSession } from "../../sessions/stop.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "./index.ts";

/** The forge, the clone, and a config whose worker runs headless for 30 seconds. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const base = await forgeWithClone(ctx);
  appendFileSync(base.vars!.CONFIG, ["[worker]", 'launcher = "process"', 'binary = "sh"', 'args = ["-c", "echo working; sleep 30"]', "max_sessions = 1", ""].join("\n"));
  const root = ctx.env.RA_SESSION_ROOT ?? join(ctx.env.RA_STATE_DIR, "sessions");
  return {
    ...base,
    cleanup: async () => {
      for (const record of listRecords(root)) {
        if (sessionState(root, record) === "running") await stopSession(root, record, { graceMs: 2_000 }).catch(() => {});
      }
      await base.cleanup?.();
    },
  };
}
