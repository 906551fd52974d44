/**
 * Setup `forge-with-tmux-failed-item`: `forge-with-tmux-worker` whose worker is a script
 * in the scenario's folder, demo/widgets onboarded, issue 1 dispatched as ra-widgets-1
 * (window @0) and killed; then the script is broken (its interpreter does not exist) and
 * `restart 1` fails to start its worker, leaving item 1 `failed` with the failed start's
 * window (@1) held open by remain-on-exit beside the first one.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mustRun } from "./episode-repo.ts";
import { thenRun } from "./forge-with-worker.ts";
import { setup as tmuxWorker } from "./forge-with-tmux-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";
import { onboardHere } from "../../testing/onboard-here.ts";

/** Item 1 failed at its restart, with two windows marked `@ra_item=1`. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await tmuxWorker(ctx);
  return await thenRun(made, async () => {
    const worker = join(ctx.dir, "worker.sh");
    writeFileSync(worker, "#!/bin/sh\necho working\nexec sleep 30\n");
    chmodSync(worker, 0o755);
    const config = made.vars!.CONFIG;
    writeFileSync(config, readFileSync(config, "utf8").replace(/^binary = .*\nargs = .*$/m, `binary = ${JSON.stringify(worker)}\nargs = []`));
    const run = (argv: string[]) => mustRun(ctx, argv, { cwd: made.cwd, env: made.env });
    await onboardHere({ env: { ...ctx.env, ...made.env } }, "demo/widgets");
    await run(["run", "--once", "--effect-level", "live"]);
    await run(["session", "kill", "ra-widgets-1"]);
    writeFileSync(worker, "#!/nonexistent/interpreter\n");
    const restart = await ctx.robotArmy(["restart", "1", "--effect-level", "live"], { cwd: made.cwd, env: made.env });
    if (restart.code !== 1 || !/could not start/.test(restart.stderr + restart.stdout)) {
      throw new Error(`setup: restart 1 was meant to fail to start its worker, and exited ${restart.code}: ${restart.stderr.trim()}`);
    }
  });
}
