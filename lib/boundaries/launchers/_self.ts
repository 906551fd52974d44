/** How a launched terminal runs robot-army itself, on the runtime running this process. */
import { join } from "node:path";
import { PROJECT_ROOT, isDeno, runtimeArgv } from "../../runtime.ts";

/**
 * The argv that runs robot-army on this runtime: `bin/robot-army.mjs` on Node, the router
 * `scripts/robot-army.ts` with `run -A --quiet --config deno.json` on Deno.
 * @example [...robotArmyArgv(), "session", "ls"]
 */
export function robotArmyArgv(): string[] {
  return isDeno()
    ? runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"))
    : runtimeArgv(join(PROJECT_ROOT, "bin", "robot-army.mjs"));
}

/** The `worker.binary` that names robot-army's own scripted stand-in for an agent (`scripts/demo-worker.ts`). */
export const DEMO_WORKER = "demo-worker";

/** Where the demo worker's script is. */
export const DEMO_WORKER_SCRIPT = join(PROJECT_ROOT, "scripts", "demo-worker.ts");

/**
 * A worker's argv as it is run: the demo worker by name becomes its script on this runtime,
 * so it starts whatever PATH the launcher's terminal has; any other argv is left as it is.
 * @example workerArgv(["demo-worker", "--once"]) // [process.execPath, ".../scripts/demo-worker.ts", "--once"] on Node
 */
export function workerArgv(argv: string[]): string[] {
  return argv[0] === DEMO_WORKER ? [...runtimeArgv(DEMO_WORKER_SCRIPT), ...argv.slice(1)] : argv;
}
