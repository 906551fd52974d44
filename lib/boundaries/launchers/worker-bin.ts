/**
 * `robot-army` on a worker's PATH: a small launcher script in `<state dir>/bin/` that runs
 * this installation on the runtime running now, so a worker (and its agent's hooks) can keep
 * its journal without setup, whatever PATH its terminal has. The holder puts that folder first
 * on the worker's PATH (`RA_PATH_FIRST`, lib/sessions/holder.ts).
 */
import { chmodSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../atomic.ts";
import { robotArmyArgv } from "./_self.ts";
import { commandText } from "../../shell-words.ts";

/** The folder the launcher is written in. */
export function workerBinDir(stateDir: string): string {
  return join(stateDir, "bin");
}

/**
 * Writes `<state dir>/bin/robot-army` (0700, its folder 0700) unless it already says what it
 * should, and returns its path. It is rewritten when robot-army moved or runs on another runtime.
 */
export function writeWorkerLauncher(stateDir: string): string {
  const dir = workerBinDir(stateDir);
  const file = join(dir, "robot-army");
  const text = launcherText(robotArmyArgv());
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (readQuietly(file) !== text) writeFileAtomic(file, text, { private: true });
  chmodSync(file, 0o700);
  return file;
}

/** The launcher's text: a POSIX shell script that execs robot-army with its arguments. */
export function launcherText(argv: string[]): string {
  return [
    "#!/bin/sh",
    "# robot-army for its workers: written by robot-army at each worker's start (never edit it).",
    `exec ${commandText(argv)} "$@"`,
    "",
  ].join("\n");
}

function readQuietly(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
