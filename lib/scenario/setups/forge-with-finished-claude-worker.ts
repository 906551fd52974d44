/**
 * Setup `forge-with-finished-claude-worker`: `forge-with-tmux-worker` whose `[worker] binary` is
 * `<dir>/bin/claude`, a stand-in for Claude Code that prints its arguments and exits a
 * second later (so the worker profile and resume command are Claude Code's, with no agent
 * installed, and a tick dispatches one issue, not every issue as each exits). demo/widgets is onboarded, issue 1 was dispatched as ra-widgets-1 (item 1),
 * its worker has exited, and issue 1 was then closed on the forge. The next pass closes the
 * session row from the spooled exit and makes item 1 done, with no session open.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeClaudeShell } from "./_claude-stand-in.ts";
import { forgeApi } from "./_forge-intake.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun } from "./forge-with-worker.ts";
import { withTmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Writes the stand-in, dispatches issue 1, waits for its worker to exit, and closes the issue. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const claude = writeClaudeShell(ctx.dir, 'echo "claude (stand-in) $*"\nsleep 1');
  const made = await withTmuxWorker(ctx, { binary: claude, args: [] });
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    const ran = await mustRun(ctx, ["run", "--once", "--effect-level", "live"], { cwd: made.cwd, env: made.env });
    if (!ran.includes("as ra-widgets-1 (item 1)")) throw new Error(`setup: run --once did not dispatch issue 1: ${ran}`);
    // Its holder spools the exit once the stand-in has ended.
    const spool = join(ctx.env.RA_STATE_DIR, "spool");
    const deadline = Date.now() + 15_000;
    while (!spooled(spool, "ra-widgets-1")) {
      if (Date.now() > deadline) throw new Error("setup: the stand-in claude of issue 1 did not exit");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await forgeApi(made).owner("PATCH", "/repos/demo/widgets/issues/1", { state: "closed" });
  });
}

/** Whether the spool holds the exit of the session named `name`. */
function spooled(spool: string, name: string): boolean {
  if (!existsSync(spool)) return false;
  return readdirSync(spool).some((file) => file.endsWith(".json") && readFileSync(join(spool, file), "utf8").includes(`"name": ${JSON.stringify(name)}`));
}
