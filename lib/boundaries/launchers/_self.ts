/** How a launched terminal runs robot-army itself, on the runtime running this process. */
import { join } from "node:path";
import { PROJECT_ROOT, isDeno, ownScript, runtimeArgv } from "../../runtime.ts";

/**
 * The argv that runs robot-army on this runtime: `bin/robot-army.mjs` on Node, the router
 * `scripts/robot-army.ts` with `run -A --quiet --config deno.json` on Deno, through `/usr/bin/env` with
 * Deno's update check off: a session's holder in a terminal, and a worker's hooks, reach
 * nothing off the machine (Deno would ask dl.deno.land for its newest version from a terminal).
 * @example [...robotArmyArgv(), "session", "ls"]
 */
export function robotArmyArgv(): string[] {
  return isDeno()
    ? ["/usr/bin/env", "DENO_NO_UPDATE_CHECK=1", ...runtimeArgv(ownScript("scripts", "robot-army"))]
    : runtimeArgv(join(PROJECT_ROOT, "bin", "robot-army.mjs"));
}
