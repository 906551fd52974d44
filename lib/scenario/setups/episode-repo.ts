/**
 * Setup `episode-repo`: a real git repository for episode scenarios, and `${DEAD_PID}`, the
 * pid of a process that has already exited (for "its client is gone" cases).
 */
import { join } from "node:path";
import { exitedPid, makeGitRepo } from "../../testing/fixtures.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** Makes the repository and finds a pid that is no longer running. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const repo = makeGitRepo(join(ctx.dir, "repo"));
  return { cwd: repo, vars: { DEAD_PID: String(exitedPid()) } };
}

/** Runs robot-army in the setup and fails the setup loudly when the command fails. */
export async function mustRun(ctx: SetupContext, argv: string[], options: { cwd: string; env?: Record<string, string> }): Promise<string> {
  const result = await ctx.robotArmy(argv, options);
  if (result.code !== 0) throw new Error(`setup: robot-army ${argv.join(" ")} exited ${result.code}: ${result.stderr.trim()}`);
  return result.stdout;
}
