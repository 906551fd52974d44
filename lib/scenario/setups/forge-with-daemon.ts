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
import { robotArmyCommand } from "../setup.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Starts the daemon and waits for its first heartbeat. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const { made, stop } = await withDaemon(ctx);
  return { ...made, cleanup: async () => {
    await stop();
    await made.cleanup?.();
  } };
}

/** `forge-with-worker`, onboarded, with the daemon past its first tick; `stop` sends it SIGTERM and waits. Its output is `<dir>/daemon.log` (`${DAEMON_LOG}`). */
export async function withDaemon(ctx: SetupContext): Promise<{ made: SetupResult; stop: () => Promise<void> }> {
  const base = await forgeWithWorker(ctx);
  let stop = async () => {};
  const log = join(ctx.dir, "daemon.log");
  const started = await thenRun(base, async () => {
    await onboardHere({ env: { ...ctx.env, ...base.env } }, "demo/widgets");
    const [bin, ...args] = robotArmyCommand(ctx.runtime);
    const out = openSync(log, "a");
    const daemon = spawn(bin, [...args, "run", "--effect-level", "live"], { cwd: base.cwd, env: { ...ctx.env, ...base.env }, stdio: ["ignore", out, out] });
    closeSync(out);
    const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
    stop = async () => {
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
        await stop();
        throw new Error(`the daemon did not finish its first tick: ${readFileSync(log, "utf8").trim()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  return { made: { ...started, vars: { ...started.vars, DAEMON_LOG: log } }, stop: () => stop() };
}
