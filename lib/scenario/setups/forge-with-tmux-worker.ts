/**
 * Setup `forge-with-tmux-worker`: `forge-with-worker` whose workers are launched in tmux,
 * in the tmux session `ra-workers`, on a tmux server of the scenario's own
 * (`TMUX_TMPDIR=<dir>/tmux`), so the owner's tmux is never touched. At the end the
 * workers are stopped and that server is killed.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { SLEEPING_WORKER, withWorker } from "./forge-with-worker.ts";
import type { WorkerCommand } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge, the clone, a tmux launcher config, and a private tmux server directory. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  // The sleep is the command itself (exec): in the window's process group, which robot-army never signals, a
  // sleep the shell started would outlive a `session kill` of the shell (see sessions/kill-leaves-job-in-terminal-group).
  return withTmuxWorker(ctx, { binary: SLEEPING_WORKER.binary, args: ["-c", "echo working; exec sleep 30"] });
}

/**
 * `forge-with-worker` whose `worker` is launched in tmux (the session `ra-workers`) on the
 * scenario's own tmux server, as an interactive agent must be; that server is killed at the end.
 */
export async function withTmuxWorker(ctx: SetupContext, worker: WorkerCommand): Promise<SetupResult> {
  const tmuxDir = join(ctx.dir, "tmux");
  mkdirSync(tmuxDir, { mode: 0o700 });
  const env = { TMUX_TMPDIR: tmuxDir };
  // The setup's own steps and the stops at the end reach the same private server.
  const made = await withWorker({ ...ctx, env: { ...ctx.env, ...env } }, { ...worker, launcher: ['launcher = "tmux"', 'tmux_session = "ra-workers"'] });
  return {
    ...made,
    env: { ...made.env, ...env },
    cleanup: async () => {
      await made.cleanup?.();
      // Only the server in the scenario's own folder: `kill-server` there ends nothing else.
      spawnSync("tmux", ["kill-server"], { env: { ...ctx.env, ...env, TMUX: "" }, stdio: "ignore" });
    },
  };
}
