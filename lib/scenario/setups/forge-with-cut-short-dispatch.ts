/**
 * Setup `forge-with-cut-short-dispatch`: `forge-with-worker` with a post-create step that
 * takes a few seconds, demo/widgets onboarded and polled at live; then a daemon tick
 * (`run --once --effect-level live`) is started and SIGKILLed, with its process group,
 * while it runs issue 1's post-create step, as a crash or a power cut would stop it. Item 1
 * is left `dispatching` with its worktree made and no worker started.
 */
import { spawn } from "node:child_process";
import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { identify, liveness } from "../../processes.ts";
import { robotArmyCommand } from "../setup.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Dispatches issue 1 and kills the daemon before its worker starts. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  const started = join(ctx.dir, "post-create-started");
  appendFileSync(made.vars!.CONFIG, ["[worktrees]", `post_create = [["touch", ${JSON.stringify(started)}], ["sleep", "2"]]`, ""].join("\n"));
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    await mustRun(ctx, ["poll", "--effect-level", "live"], { cwd: made.cwd, env: made.env });
    const [bin, ...args] = robotArmyCommand(ctx.runtime);
    const daemon = spawn(bin, [...args, "run", "--once", "--effect-level", "live"], { cwd: made.cwd, env: { ...ctx.env, ...made.env }, stdio: "ignore", detached: true });
    const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
    await waitUntil("the post-create step to start", () => existsSync(started) || daemon.exitCode !== null);
    if (daemon.exitCode !== null) throw new Error(`the daemon tick ended (exit ${daemon.exitCode}) before issue 1's post-create step`);
    const tick = identify(daemon.pid!);
    // The group the spawn made for the tick: the daemon and its post-create step, nothing else.
    process.kill(-daemon.pid!, "SIGKILL");
    await exited;
    await waitUntil("the daemon to be gone", () => liveness(tick) === "exited");
  });
}

async function waitUntil(what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
