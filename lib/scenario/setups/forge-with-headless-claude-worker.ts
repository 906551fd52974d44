/**
 * Setup `forge-with-headless-claude-worker`: `forge-with-worker` (the process launcher: no
 * terminal) whose `[worker] binary` is `<dir>/bin/claude`, a stand-in for Claude Code that
 * prints its arguments and exits (so the worker profile is claude, from the binary's name, with
 * no agent installed). Nothing is dispatched yet.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "./index.ts";

/** Writes the stand-in and a config that runs it headless. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const bin = join(ctx.dir, "bin");
  mkdirSync(bin, { recursive: true });
  const claude = join(bin, "claude");
  writeFileSync(claude, '#!/bin/sh\necho "claude (stand-in) $*"\n');
  chmodSync(claude, 0o755);
  return await withWorker(ctx, { binary: claude, args: [] });
}
