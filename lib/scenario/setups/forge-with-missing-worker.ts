/**
 * Setup `forge-with-missing-worker`: `forge-with-worker`, but the configured worker
 * program does not exist (`<dir>/bin/no-such-agent`), so every launch fails at once, as
 * when an agent was uninstalled or its path mistyped.
 */
import { join } from "node:path";
import { withWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The forge, the clone, and a config naming a worker program that is not there. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withWorker(ctx, { binary: join(ctx.dir, "bin", "no-such-agent"), args: [] });
}
