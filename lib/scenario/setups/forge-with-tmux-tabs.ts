/**
 * Setup `forge-with-tmux-tabs`: `forge-with-tmux-worker`, demo/widgets onboarded, issue 1
 * dispatched as ra-widgets-1 (window @0), its worker killed, resumed as ra-widgets-1-2
 * (window @1) and killed again, so item 1 has two tabs kept by remain-on-exit and no
 * worker; the owner's own window (@2, no marker) in the workers' tmux session; then the
 * config changed to name another tmux session (`ra-later`) for workers from now on, and
 * issue 1 closed on the forge by its owner. The owner's window runs a shell that writes
 * `owner-window-closed` beside the clone if its window is ever closed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { forgeApi } from "./_forge-intake.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun } from "./forge-with-worker.ts";
import { setup as tmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "./index.ts";

/** Two attempts at issue 1 in two tmux windows, both ended; the owner's window beside them; the config's tmux session changed; issue 1 closed. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await tmuxWorker(ctx);
  return await thenRun(made, async () => {
    const run = (argv: string[]) => mustRun(ctx, argv, { cwd: made.cwd, env: made.env });
    await run(["onboard", "demo/widgets"]);
    await run(["run", "--once", "--effect-level", "live"]);
    await run(["session", "kill", "ra-widgets-1"]);
    await run(["resume", "1", "--effect-level", "live"]);
    await run(["session", "kill", "ra-widgets-1-2"]);
    ownersWindow(ctx, made, join(made.cwd, "..", "owner-window-closed"));
    const config = made.vars!.CONFIG;
    writeFileSync(config, readFileSync(config, "utf8").replace('tmux_session = "ra-workers"', 'tmux_session = "ra-later"'));
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { state: "closed" });
  });
}

/** Opens a window without a marker in the workers' tmux session, on the scenario's own server. */
export function ownersWindow(ctx: SetupContext, made: SetupResult, closedFile: string): void {
  const shell = `trap 'touch "$0"; exit' HUP; while :; do sleep 1; done`;
  const opened = spawnSync("tmux", ["new-window", "-d", "-t", "=ra-workers:", "-n", "owner", "--", "sh", "-c", shell, closedFile], {
    env: { ...ctx.env, ...made.env, TMUX: "" }, encoding: "utf8",
  });
  if (opened.status !== 0) throw new Error(`setup: tmux could not open the owner's window: ${opened.stderr.trim()}`);
}
