/**
 * Setup `forge-with-tmux-worker-job`: `forge-with-tmux-worker`, demo/widgets onboarded and
 * item 1 dispatched (one `run --once`), whose worker runs in a tmux window and has left a
 * job in the background that outlives its window (`nohup`):
 * `sh -c 'echo working; nohup sleep 30 > job.out 2>&1 & exec sleep 30'`.
 * The worker runs in the foreground of its window, so the job shares the window's process
 * group, which tmux made, not robot-army; that group's id becomes `<pgid>` in the output.
 * At the end the scenario's own tmux server is killed, and what is left of that group (the
 * job) is sent SIGKILL.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { groupMembers } from "../../processes.ts";
import { listRecords } from "../../sessions/records.ts";
import { mustRun } from "./episode-repo.ts";
import { sessionRootOf, thenRun, withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { spawnSync } from "node:child_process";
import { onboardHere } from "../../testing/onboard-here.ts";

/** The worker: it says it works, leaves a job running in its group, and goes on. */
const WORKER = { binary: "sh", args: ["-c", "echo working; nohup sleep 30 > job.out 2>&1 & exec sleep 30"] };

/** Dispatches item 1 into a tmux window and waits until its job runs beside its command. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const tmuxDir = join(ctx.dir, "tmux");
  mkdirSync(tmuxDir, { mode: 0o700 });
  const env = { TMUX_TMPDIR: tmuxDir };
  const withTmux = { ...ctx, env: { ...ctx.env, ...env } };
  const made = await withWorker(withTmux, { ...WORKER, launcher: ['launcher = "tmux"', 'tmux_session = "ra-workers"'] });
  let pgid = 0;
  const stopTmux = async () => {
    await made.cleanup?.();
    // Only the server in the scenario's own folder: `kill-server` there ends nothing else.
    spawnSync("tmux", ["kill-server"], { env: { ...ctx.env, ...env, TMUX: "" }, stdio: "ignore" });
    // The window's group, made by this scenario's tmux: the job that outlived the window is all that can be left in it.
    if (pgid > 1 && groupMembers(pgid).length) process.kill(-pgid, "SIGKILL");
    while (pgid > 1 && groupMembers(pgid).length) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  await thenRun({ ...made, cleanup: stopTmux }, async () => {
    const stepsEnv = { ...made.env, ...env };
    await onboardHere({ env: { ...ctx.env, ...stepsEnv } }, "demo/widgets");
    await mustRun(ctx, ["run", "--once", "--effect-level", "live"], { cwd: made.cwd, env: stepsEnv });
    const root = sessionRootOf(withTmux);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const record = listRecords(root).find((r) => r.childPid !== null && typeof r.sharedPgid === "number");
      // The group's members besides the holder and the command: the job, once it runs.
      if (record && groupMembers(record.sharedPgid!).some((pid) => pid !== record.holderPid && pid !== record.childPid)) {
        pgid = record.sharedPgid!;
        break;
      }
      if (Date.now() > deadline) throw new Error("the worker of item 1 did not start its job in its window's process group");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  return { ...made, env: { ...made.env, ...env }, placeholders: { ...made.placeholders, [String(pgid)]: "<pgid>" }, cleanup: stopTmux };
}
