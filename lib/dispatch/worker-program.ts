/**
 * Whether the configured worker program can be started at all, asked once before a
 * dispatch pass claims anything: a missing program would otherwise fail every ready item
 * in turn, each with a public failure comment, for what is one mistake in the config.
 *
 * `demo-worker` is robot-army's own (`scripts/demo-worker.ts`, run on this runtime), so it
 * is always found. An absolute `worker.binary` is checked as it is; a relative path is
 * left to the launch (it is run from the worktree, which does not exist yet). A bare name
 * is looked up on the PATH the worker would get, which the launcher tells: robot-army's
 * own for the `process` launcher, the window's for tmux (asked of the tmux server). Where
 * that PATH cannot be told (a kitty tab, a tmux that does not answer), a name not found
 * is not taken as missing (DESIGN rule 1: unknown is not "absent").
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import type { Config } from "../config.ts";
import { DEMO_WORKER, DEMO_WORKER_SCRIPT } from "../boundaries/launchers/demo-worker.ts";
import { launcherFor } from "../boundaries/launchers/select.ts";
import type { WorkerPath } from "../boundaries/launchers/types.ts";

/** What the check found: the program's path, why it cannot be started, or why that cannot be told here. */
export type WorkerProgram = { found: string } | { missing: string } | { unknown: string };

/** Where the worker's PATH comes from: by default the configured launcher says. */
export interface WorkerProgramOptions {
  env?: Record<string, string | undefined>;
  /** The PATH the worker would get; default: asked of the launcher `worker.launcher` names. */
  workerPath?: () => Promise<WorkerPath>;
}

/** Finds `worker.binary` as a launch would. */
export async function findWorkerProgram(config: Config, options: WorkerProgramOptions = {}): Promise<WorkerProgram> {
  const binary = config.worker.binary;
  if (binary === DEMO_WORKER) return { found: DEMO_WORKER_SCRIPT };
  if (isAbsolute(binary)) {
    const problem = notExecutable(binary);
    return problem ? { missing: `the worker program ${binary} ${problem} (worker.binary)` } : { found: binary };
  }
  if (binary.includes("/")) return { unknown: `the worker program "${binary}" is a relative path, run from the worktree (worker.binary)` };
  const env = options.env ?? process.env;
  const path = await (options.workerPath ?? (() => launcherFor(config, { env }).workerPath()))();
  if ("unknown" in path) return { unknown: `the worker program "${binary}" cannot be looked up: ${path.unknown} (worker.binary)` };
  for (const dir of path.path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, binary);
    if (!notExecutable(candidate)) return { found: candidate };
  }
  const whose = config.worker.launcher === "process" ? "PATH" : `PATH a ${config.worker.launcher} window gets`;
  return { missing: `the worker program "${binary}" is not on the ${whose} (worker.binary)` };
}

/** Why a path cannot be run, or undefined when it can. */
function notExecutable(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return "is not a file";
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? "does not exist" : code === "EACCES" ? "is not executable" : `cannot be checked (${code})`;
  }
}
