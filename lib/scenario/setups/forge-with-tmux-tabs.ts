/**
 * Setup `forge-with-tmux-tabs`: `forge-with-tmux-worker`, demo/widgets onboarded, issue 1
 * dispatched as ra-widgets-1 (window @0), its worker killed, resumed as ra-widgets-1-2
 * (window @1) and killed again, so item 1 has two tabs kept by remain-on-exit and no
 * worker; the owner's own window (@2, no marker) in the workers' tmux session; another
 * robot-army's item 1 window (@3: `@ra_item=1` with another state dir's store in `@ra_store`,
 * its command ended, kept by remain-on-exit); then the config changed to name another tmux
 * session (`ra-later`) for workers from now on, and issue 1 closed on the forge by its owner.
 * The owner's window runs a shell that writes `owner-window-closed` beside the clone if its
 * window is ever closed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { waitFor } from "../../testing/wait.ts";
import { forgeApi } from "./_forge-intake.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun } from "./forge-with-worker.ts";
import { setup as tmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Two attempts at issue 1 in two tmux windows, both ended; the owner's window beside them; the config's tmux session changed; issue 1 closed. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await tmuxWorker(ctx);
  return await thenRun(made, async () => {
    const run = (argv: string[]) => mustRun(ctx, argv, { cwd: made.cwd, env: made.env });
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    await run(["run", "--once", "--effect-level", "live"]);
    await run(["session", "kill", "ra-widgets-1"]);
    await run(["resume", "1", "--effect-level", "live"]);
    await run(["session", "kill", "ra-widgets-1-2"]);
    ownersWindow(ctx, made, join(made.cwd, "..", "owner-window-closed"));
    await anotherStoresWindow(ctx, made, join(made.cwd, "..", "other-state", "robot-army.db"));
    const config = made.vars!.CONFIG;
    writeFileSync(config, readFileSync(config, "utf8").replace('tmux_session = "ra-workers"', 'tmux_session = "ra-later"'));
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { state: "closed" });
  });
}

/**
 * Opens a window in the workers' tmux session marked as item 1 of another store (as the
 * rehearsal's or a second state dir's item 1 would be), whose command has ended, the window
 * kept by remain-on-exit as a worker's is.
 */
async function anotherStoresWindow(ctx: SetupContext, made: SetupResult, store: string): Promise<void> {
  const env = { ...ctx.env, ...made.env, TMUX: "" };
  const tmux = (...args: string[]) => {
    const result = spawnSync("tmux", args, { env, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`setup: tmux ${args[0]} failed: ${result.stderr.trim()}`);
    return result.stdout.trim();
  };
  const window = tmux("new-window", "-d", "-t", "=ra-workers:", "-n", "ra-other-1", "-P", "-F", "#{window_id}", "--", "sleep", "30");
  tmux("set-option", "-w", "-t", window, "remain-on-exit", "on");
  tmux("set-option", "-w", "-t", window, "@ra_item", "1");
  tmux("set-option", "-w", "-t", window, "@ra_store", store);
  // The setup's own sleep, ended by its pid: the window stays with a dead pane, as an ended worker's does.
  process.kill(Number(tmux("display-message", "-p", "-t", window, "#{pane_pid}")), "SIGTERM");
  await waitFor(`window ${window}'s command to end`, () => tmux("display-message", "-p", "-t", window, "#{pane_dead}") === "1");
}

/** Opens a window without a marker in the workers' tmux session, on the scenario's own server. */
export function ownersWindow(ctx: SetupContext, made: SetupResult, closedFile: string): void {
  const shell = `trap 'touch "$0"; exit' HUP; while :; do sleep 1; done`;
  const opened = spawnSync("tmux", ["new-window", "-d", "-t", "=ra-workers:", "-n", "owner", "--", "sh", "-c", shell, closedFile], {
    env: { ...ctx.env, ...made.env, TMUX: "" }, encoding: "utf8",
  });
  if (opened.status !== 0) throw new Error(`setup: tmux could not open the owner's window: ${opened.stderr.trim()}`);
}
