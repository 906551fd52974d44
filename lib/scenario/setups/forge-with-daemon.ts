/**
 * Setup `forge-with-daemon`: `forge-with-worker`, demo/widgets onboarded, and the daemon
 * (`robot-army run --effect-level live`) running in the background for this state dir
 * until the scenario ends; it has taken its lock and finished its first tick. At the end
 * it is sent SIGTERM by its pid (SIGKILL if it has not stopped within ten seconds), then
 * its workers are stopped.
 */
import { spawn } from "node:child_process";
import { existsSync, openSync, closeSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { robotArmyCommand } from "../run.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "./index.ts";

/** Starts the daemon and waits for its first heartbeat. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  let stopDaemon = async () => {};
  const started = await thenRun(made, async () => {
    await mustRun(ctx, ["onboard", "demo/widgets"], { cwd: made.cwd, env: made.env });
    const [bin, ...args] = robotArmyCommand(ctx.runtime);
    const log = join(ctx.dir, "daemon.log");
    const out = openSync(log, "a");
    const daemon = spawn(bin, [...args, "run", "--effect-level", "live"], { cwd: made.cwd, env: { ...ctx.env, ...made.env }, stdio: ["ignore", out, out] });
    closeSync(out);
    const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
    stopDaemon = async () => {
      if (daemon.exitCode !== null || daemon.signalCode !== null) return;
      daemon.kill("SIGTERM");
      const late = setTimeout(() => daemon.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(late);
    };
    const heartbeat = join(ctx.env.RA_STATE_DIR, "heartbeat.json");
    const deadline = Date.now() + 30_000;
    while (!(existsSync(heartbeat) && readFileSync(heartbeat, "utf8").includes(`"pid": ${daemon.pid}`))) {
      if (daemon.exitCode !== null || Date.now() > deadline) {
        await stopDaemon();
        throw new Error(`the daemon did not finish its first tick: ${readFileSync(log, "utf8").trim()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  return {
    ...started,
    cleanup: async () => {
      await stopDaemon();
      await made.cleanup?.();
    },
  };
}
