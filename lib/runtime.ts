/**
 * The runtime robot-army is running on, and how to start another robot-army program on
 * the same one (a session's holder, a respawn): Node runs `.ts` files directly; Deno
 * needs `run -A` and the project's deno.json.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project's root folder. */
export const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * The extension of robot-army's own source files as this copy runs them: `.ts` in a clone,
 * `.js` in the package `npm run pack` builds (Node strips no types under node_modules).
 */
export const SOURCE_EXT = import.meta.url.endsWith(".ts") ? ".ts" : ".js";

/** One of robot-army's own scripts, by its path from the project's root without extension. */
export function ownScript(...path: string[]): string {
  const last = path.length - 1;
  return join(PROJECT_ROOT, ...path.slice(0, last), `${path[last]}${SOURCE_EXT}`);
}

/** Whether this process is Deno. */
export function isDeno(): boolean {
  return "Deno" in globalThis;
}

/** The argv that runs a script of ours on the runtime running this process. */
export function runtimeArgv(script: string): string[] {
  if (isDeno()) return [process.execPath, "run", "-A", "--quiet", "--config", fileURLToPath(new URL("../deno.json", import.meta.url)), script];
  return [process.execPath, script];
}
