/**
 * Setup `forge-with-process-in-merged-worktree`: `forge-with-merged-demo-worker` where a
 * process that is no robot-army session works in item 1's worktree (the owner's `sleep`,
 * started there in a terminal of their own): git reports the worktree clean, and no session
 * of the item runs. The process is ended after the last step. `${BUSY_PID}` is its pid.
 */
import { spawn } from "node:child_process";
import { worktreeOf } from "./_cleanup.ts";
import { mergeAll, withIdleDemoWorkers } from "./_demo-workers.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

export async function setup(ctx: SetupContext): Promise<SetupResult> {
  let pid: number | undefined;
  const made = await withIdleDemoWorkers(ctx, {
    issues: 1,
    owner: async (api, pulls) => {
      await mergeAll(api, pulls);
      const busy = spawn("sleep", ["600"], { cwd: worktreeOf(ctx, 1), stdio: "ignore", detached: true });
      busy.unref();
      pid = busy.pid;
    },
  });
  return {
    ...made,
    vars: { ...made.vars, BUSY_PID: String(pid) },
    placeholders: { ...made.placeholders, [`process ${pid} `]: "process <busy-pid> " },
    cleanup: async () => {
      // Only the process this setup started, by its pid.
      if (pid !== undefined) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      await made.cleanup?.();
    },
  };
}
