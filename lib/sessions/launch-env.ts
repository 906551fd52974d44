/**
 * The environment a launcher hands its worker: the daemon's own, whatever terminal hosts the
 * worker. A tmux server or a kitty that was already running gives the windows it opens its
 * own environment, from whenever it started, so a variable the owner set for the agent (an
 * API base, a proxy, a key) would silently not reach it. The launcher writes the daemon's
 * environment to a file only its owner can read (`<state dir>/launch-env/<id>.json`, 0600 in
 * a 0700 folder), names it to `session run --launch-env`, and the holder takes it (reads it and
 * removes it at once) as the base of its command's environment; the variables that say which
 * terminal this is (TERM, TMUX_PANE, KITTY_WINDOW_ID, ...) stay the terminal's own.
 */
import { randomUUID } from "node:crypto";
import { chmodSync, lstatSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { makePrivateDir, stateDirPath } from "../state-dir.ts";

/** An environment as robot-army reads it. */
export type Env = Record<string, string | undefined>;

/** The variables that describe the terminal a command runs in: the terminal's, never the daemon's. */
export const TERMINAL_VARIABLES: readonly string[] = [
  "TERM", "COLORTERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TMUX", "TMUX_PANE",
  "KITTY_WINDOW_ID", "KITTY_PID", "KITTY_PUBLIC_KEY", "KITTY_INSTALLATION_DIR", "WINDOWID", "COLUMNS", "LINES",
];

/** Writes `env` (its defined variables) for one launch; returns the file's path. */
export function writeLaunchEnv(env: Env): string {
  const dir = join(stateDirPath(env), "launch-env");
  makePrivateDir(dir);
  const file = join(dir, `${randomUUID()}.json`);
  const defined = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  writeFileSync(file, JSON.stringify(defined), { mode: 0o600, flag: "wx" });
  // The umask can only take bits away; this makes sure nothing else was granted either.
  chmodSync(file, 0o600);
  return file;
}

/**
 * Takes a launch's environment: reads the file and removes it. A file that is not a regular
 * file of this user's, readable by its owner only, or not a JSON object of strings, is refused
 * (and left where it is for its owner to look at): the command is not run on a guess.
 */
export function takeLaunchEnv(file: string): Record<string, string> {
  let stat;
  try {
    stat = lstatSync(file);
  } catch (error) {
    throw new PreconditionError(`The launch environment "${file}" cannot be read: ${(error as Error).message}`);
  }
  const uid = process.getuid?.();
  if (!stat.isFile() || (stat.mode & 0o077) !== 0 || (uid !== undefined && stat.uid !== uid)) {
    throw new PreconditionError(`The launch environment "${file}" is not a file only its owner can read (mode 0600, yours)`);
  }
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new PreconditionError(`The launch environment "${file}" is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || Object.values(value).some((v) => typeof v !== "string")) {
    throw new PreconditionError(`The launch environment "${file}" is not an object of strings`);
  }
  rmSync(file, { force: true });
  return value as Record<string, string>;
}

/** The launch's environment with the terminal's own variables kept: the base a worker's command starts from. */
export function withTerminal(launch: Record<string, string>, terminal: Env): Env {
  const base: Env = { ...launch };
  for (const name of TERMINAL_VARIABLES) {
    if (terminal[name] === undefined) delete base[name];
    else base[name] = terminal[name];
  }
  return base;
}
