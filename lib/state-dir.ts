/**
 * Where robot-army keeps its state (the store, spools, heartbeats): `RA_STATE_DIR`, else
 * `$XDG_STATE_HOME/robot-army`, else `~/.local/state/robot-army`.
 */
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

type Env = Record<string, string | undefined>;

/** The state dir's path, whether or not it exists yet. */
export function stateDirPath(env: Env = process.env): string {
  if (env.RA_STATE_DIR) return resolve(env.RA_STATE_DIR);
  if (env.XDG_STATE_HOME) return join(resolve(env.XDG_STATE_HOME), "robot-army");
  return join(env.HOME || homedir(), ".local", "state", "robot-army");
}

/** The state dir's path, created private to its owner (0700) when it is missing. */
export function ensureStateDir(env: Env = process.env): string {
  const dir = stateDirPath(env);
  makePrivateDir(dir);
  return dir;
}

/**
 * Creates a directory with mode 0700 when it is missing, and only then: an existing
 * directory keeps the mode its owner gave it.
 */
export function makePrivateDir(dir: string): void {
  if (existsSync(dir)) return;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The umask could have taken bits mkdir asked for; the state dir is private either way.
  chmodSync(dir, 0o700);
}
