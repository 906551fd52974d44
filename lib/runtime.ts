/**
 * The runtime robot-army is running on, and how to start another robot-army program on
 * the same one (a session's holder, a respawn): Node runs `.ts` files directly; Deno
 * needs `run -A` and the project's deno.json.
 */
import { fileURLToPath } from "node:url";

/** The project's root folder. */
export const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Whether this process is Deno. */
export function isDeno(): boolean {
  return "Deno" in globalThis;
}

/** The argv that runs a script of ours on the runtime running this process. */
export function runtimeArgv(script: string): string[] {
  if (isDeno()) return [process.execPath, "run", "-A", "--quiet", "--config", fileURLToPath(new URL("../deno.json", import.meta.url)), script];
  return [process.execPath, script];
}
