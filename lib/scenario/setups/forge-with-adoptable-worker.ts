/**
 * Setup `forge-with-adoptable-worker`: `forge-with-worker`, demo/widgets onboarded and polled
 * at live; then a daemon tick (`run --once --effect-level live`) dispatches issue 1 and is
 * SIGKILLed right after its worker's launch is recorded (`RA_FAULT=session.launch:outcome`,
 * the crash suite's fault point), before the session row is written: item 1 is left
 * `dispatching` while its worker runs, recorded nowhere but in its managed session and the
 * audit log.
 */
import { spawn } from "node:child_process";
import { robotArmyCommand } from "../setup.ts";
import { mustRun } from "./episode-repo.ts";
import { thenRun, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Dispatches issue 1 and kills the daemon between its worker's launch and its session row. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  return await thenRun(made, async () => {
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    await mustRun(ctx, ["poll", "--effect-level", "live"], { cwd: made.cwd, env: made.env });
    const [bin, ...args] = robotArmyCommand(ctx.runtime);
    const daemon = spawn(bin, [...args, "run", "--once", "--effect-level", "live"], {
      cwd: made.cwd, env: { ...ctx.env, ...made.env, RA_FAULT: "session.launch:outcome" }, stdio: "ignore",
    });
    const how = await new Promise<string>((resolve) => daemon.once("exit", (code, signal) => resolve(String(signal ?? code))));
    if (how !== "SIGKILL") throw new Error(`the daemon tick ended ${how}, not by its fault point after the launch`);
  });
}
