/**
 * Setup `forge-with-headless-claude-worker`: `forge-with-worker` (the process launcher: no
 * terminal) whose `[worker] binary` is `<dir>/bin/claude`, a stand-in for Claude Code that
 * prints its arguments and exits (so the worker profile is claude, from the binary's name, with
 * no agent installed). Nothing is dispatched yet.
 */
import { writeClaudeShell } from "./_claude-stand-in.ts";
import { withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Writes the stand-in and a config that runs it headless. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  return await withWorker(ctx, { binary: writeClaudeShell(ctx.dir, 'echo "claude (stand-in) $*"'), args: [] });
}
