/**
 * Setup `forge-with-tmux-running-tab`: `forge-with-tmux-tabs` (item 1's two ended attempts in
 * windows @0 and @1, the owner's window @2, another robot-army's item 1 window @3, issue 1
 * closed on the forge), then the owner respawned a shell in item 1's first window
 * (`tmux respawn-pane`), so something runs there again though no session of item 1 is open.
 * That shell writes `running-window-closed` beside the clone if its window is ever closed.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { processStartTime } from "../../processes.ts";
import { thenRun } from "./forge-with-worker.ts";
import { setup as tabs } from "./forge-with-tmux-tabs.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Item 1's tabs left as `forge-with-tmux-tabs` leaves them, a shell running again in window @0. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await tabs(ctx);
  const env = { ...ctx.env, ...made.env, TMUX: "" };
  let shellPid = 0;
  let shellStart: string | undefined;
  // The shell goes first, by its pid and with no chance to trap: the server's end would HUP it, and its
  // file written while the scenario's folder is being removed would make that removal fail.
  const cleanup = async () => {
    if (shellPid > 1 && processStartTime(shellPid) === shellStart) {
      process.kill(shellPid, "SIGKILL");
      while (processStartTime(shellPid) !== undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await made.cleanup?.();
  };
  return await thenRun({ ...made, cleanup }, async () => {
    const shell = `trap 'touch "$0"; exit' HUP; while :; do sleep 1; done`;
    const closedFile = join(made.cwd, "..", "running-window-closed");
    const respawned = spawnSync("tmux", ["respawn-pane", "-k", "-t", "@0", "--", "sh", "-c", shell, closedFile], {
      env, encoding: "utf8",
    });
    if (respawned.status !== 0) throw new Error(`setup: tmux could not respawn window @0: ${respawned.stderr.trim()}`);
    shellPid = Number(spawnSync("tmux", ["display-message", "-p", "-t", "@0", "#{pane_pid}"], { env, encoding: "utf8" }).stdout.trim());
    shellStart = processStartTime(shellPid);
  });
}
