/**
 * Whether the configured worker program can be started at all, asked once before a
 * dispatch pass claims anything: a missing program would otherwise fail every ready item
 * in turn, each with a public failure comment, for what is one mistake in the config.
 *
 * An absolute `worker.binary` is checked as it is; a relative path is left to the launch
 * (it is run from the worktree, which does not exist yet). A bare name is looked up
 * on PATH, which is only the worker's PATH when the worker inherits this environment (the
 * `process` launcher); a tmux or kitty window has the terminal's own PATH, so there a
 * name not found here is not taken as missing (DESIGN rule 1: unknown is not "absent").
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import type { Config } from "../config.ts";

/** What the check found: the program's path, why it cannot be started, or why that cannot be told here. */
export type WorkerProgram = { found: string } | { missing: string } | { unknown: string };

/** Finds `worker.binary` as a launch would. */
export function findWorkerProgram(config: Pick<Config, "worker">, env: Record<string, string | undefined> = process.env): WorkerProgram {
  const binary = config.worker.binary;
  if (isAbsolute(binary)) {
    const problem = notExecutable(binary);
    return problem ? { missing: `the worker program ${binary} ${problem} (worker.binary)` } : { found: binary };
  }
  if (binary.includes("/")) return { unknown: `the worker program "${binary}" is a relative path, run from the worktree (worker.binary)` };
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean)) {
    const path = join(dir, binary);
    if (!notExecutable(path)) return { found: path };
  }
  const where = `the worker program "${binary}" is not on PATH (worker.binary)`;
  return config.worker.launcher === "process" ? { missing: where } : { unknown: `${where} here; a ${config.worker.launcher} window may have another PATH` };
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
