/** robot-army's own scripted stand-in for an agent, as `worker.binary = "demo-worker"` names it. */
import { ownScript, runtimeArgv } from "../../runtime.ts";

/** The `worker.binary` that names robot-army's own scripted stand-in for an agent (`scripts/demo-worker.ts`). */
export const DEMO_WORKER = "demo-worker";

/** Where the demo worker's script is. */
export const DEMO_WORKER_SCRIPT = ownScript("scripts", "demo-worker");

/**
 * A worker's argv as it is run: the demo worker by name becomes its script on this runtime,
 * so it starts whatever PATH the launcher's terminal has; any other argv is left as it is.
 * @example workerArgv(["demo-worker", "--once"]) // [process.execPath, ".../scripts/demo-worker.ts", "--once"] on Node
 */
export function workerArgv(argv: string[]): string[] {
  return argv[0] === DEMO_WORKER ? [...runtimeArgv(DEMO_WORKER_SCRIPT), ...argv.slice(1)] : argv;
}
