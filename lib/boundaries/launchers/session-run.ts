/**
 * What every launcher shares: the `robot-army session run` argv a worker is started with,
 * the variables that tell that command where the session root is, the wait until the
 * session is on record.
 */
import { isAbsolute, join, resolve } from "node:path";
import { sessionRoot, listRecords } from "../../sessions/records.ts";
import type { SessionRecord } from "../../sessions/records.ts";
import { readSpooledExit, spoolDir, spoolFiles as listSpool } from "../../sessions/spool.ts";
import { stateDirPath } from "../../state-dir.ts";
import { robotArmyArgv } from "./_self.ts";
import { workerArgv } from "./demo-worker.ts";
import { LaunchError } from "./types.ts";
import type { Launched, LauncherName, LaunchSpec, Terminal } from "./types.ts";

/** An environment as robot-army reads it. */
export type Env = Record<string, string | undefined>;

/** Options every launcher takes. */
export interface LauncherBaseOptions {
  /** The environment robot-army runs in; it names the session root and state dir (default: `process.env`). */
  env?: Env;
  /** How long a launch waits for its session to be on record and started (default 30 s). */
  timeoutMs?: number;
}

/** The variable that hands the worker the path of its prompt file. */
export const PROMPT_FILE_VARIABLE = "RA_PROMPT_FILE";

/** How long a launch waits by default. */
export const DEFAULT_LAUNCH_TIMEOUT_MS = 30_000;

/**
 * How long after typing a message into a worker's terminal its Enter is pressed (a launcher's
 * `sendText`): an agent that detects a paste (Codex) takes a key sent with the text for part of it.
 */
export const ENTER_AFTER_MS = 300;

/**
 * The argv that runs the worker in a managed session. Options take the `--opt=value` form,
 * so a value starting with `-` is never read as an option.
 */
export function sessionRunArgv(spec: LaunchSpec, options: { detach: boolean; envFile?: string }): string[] {
  checkSpec(spec);
  const env: Record<string, string> = { ...spec.env };
  if (spec.stdinFile !== undefined) env[PROMPT_FILE_VARIABLE] = resolve(spec.stdinFile);
  return [
    ...robotArmyArgv(), "session", "run",
    ...(options.detach ? ["--detach"] : []),
    `--name=${spec.name}`,
    ...(spec.sessionId === undefined ? [] : [`--id=${spec.sessionId}`]),
    `--tag=ra_item=${spec.item}`,
    ...Object.entries(spec.tags).map(([key, value]) => `--tag=${key}=${value}`),
    `--cwd=${resolve(spec.cwd)}`,
    ...Object.entries(env).map(([key, value]) => `--env=${key}=${value}`),
    ...(options.envFile === undefined ? [] : [`--launch-env=${options.envFile}`]),
    "--", ...workerArgv(spec.argv),
  ];
}

/** Mistakes in a spec are the caller's bugs, not launch failures. */
function checkSpec(spec: LaunchSpec): void {
  if (!Number.isInteger(spec.item) || spec.item < 1) throw new RangeError(`Work item id must be a positive whole number, got ${spec.item}`);
  if (spec.argv.length === 0 || spec.argv[0] === "") throw new TypeError(`The worker's argv for "${spec.name}" is empty`);
  for (const key of Object.keys(spec.tags)) {
    if (key === "ra_item") throw new TypeError(`Tag "ra_item" comes from the spec's item; do not set it in tags`);
    if (key === "" || key.includes("=")) throw new TypeError(`Tag name "${key}" must be non-empty and without "="`);
  }
  for (const key of Object.keys(spec.env ?? {})) {
    if (key === "" || key.includes("=")) throw new TypeError(`Variable name "${key}" must be non-empty and without "="`);
    if (key === PROMPT_FILE_VARIABLE && spec.stdinFile !== undefined) throw new TypeError(`${PROMPT_FILE_VARIABLE} comes from stdinFile; do not set it in env`);
  }
  if (spec.stdinFile !== undefined && !isAbsolute(spec.stdinFile)) throw new TypeError(`stdinFile "${spec.stdinFile}" must be an absolute path`);
}

/**
 * The variables a launched `session run` needs to write where this process reads: a
 * terminal's own environment (a tmux server's, a kitty's) may name another state dir.
 */
export function sessionEnv(env: Env): Record<string, string> {
  return {
    RA_STATE_DIR: stateDirPath(env),
    RA_SESSION_ROOT: sessionRoot(env),
    ...(env.RA_NOW ? { RA_NOW: env.RA_NOW } : {}),
  };
}

/** Refuses a launch whose session name is already on record: the wait would find that one instead. */
export function assertNameFree(launcher: LauncherName, root: string, spec: LaunchSpec): void {
  const taken = listRecords(root).find((record) => record.name === spec.name);
  if (taken) {
    throw new LaunchError(launcher, spec, `a session named "${spec.name}" is already on record (id ${taken.id}); remove it with "robot-army session rm ${spec.name}"`);
  }
}

/** A launch being watched for its session: see `watchLaunch`. */
export interface LaunchWatch {
  /**
   * Waits until the session is on record and its command started, or it already ran and
   * was reaped (its exit record is then new in the exit spool). `ended` reports, when it
   * can, that the launched command is gone (a dead tmux pane), so a launch that failed at
   * once is not waited for until the timeout.
   */
  wait(options: { timeoutMs: number; ended?: () => Promise<string | undefined> }): Promise<{ name: string; id: string }>;
}

/**
 * Starts watching for a launch's session; call it before the launch. It refuses a name
 * already on record, and notes the exit spool, so an exit found there later is this launch's.
 */
export function watchLaunch(launcher: LauncherName, env: Env, spec: LaunchSpec): LaunchWatch {
  const root = sessionRoot(env);
  assertNameFree(launcher, root, spec);
  const spool = spoolDir(env);
  const before = new Set(spoolFiles(spool));
  const reaped = () => spoolFiles(spool).filter((file) => !before.has(file)).map((file) => readSpooledExit(join(spool, file)))
    .find((exit) => exit?.name === spec.name && exit.item === String(spec.item));
  /** The launched session once its start is decided: started (or already reaped), a LaunchError when it failed, else undefined. */
  const settled = (): { name: string; id: string } | undefined => {
    const record = findLaunched(root, spec);
    if (record?.ended === "failed-to-start") {
      throw new LaunchError(launcher, spec, `its command "${record.command}" could not start: ${record.startError}`);
    }
    if (record && (record.childPid !== null || record.exitedAt)) return { name: record.name, id: record.id };
    const exit = record ? undefined : reaped();
    return exit ? { name: exit.name, id: exit.session_id } : undefined;
  };
  return {
    async wait(options) {
      const deadline = Date.now() + options.timeoutMs;
      for (;;) {
        const session = settled();
        if (session) return session;
        const gone = options.ended ? await options.ended() : undefined;
        if (gone) {
          // Look once more: the command may have ended between the two looks.
          const last = settled();
          if (last) return last;
          throw new LaunchError(launcher, spec, gone);
        }
        if (Date.now() > deadline) {
          throw new LaunchError(launcher, spec, `its session was not on record and started within ${options.timeoutMs / 1000}s`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

function findLaunched(root: string, spec: LaunchSpec): SessionRecord | undefined {
  try {
    return listRecords(root).find((r) => r.name === spec.name && r.tags.ra_item === String(spec.item));
  } catch {
    // A record being rewritten by someone else: look again at the next poll.
    return undefined;
  }
}

function spoolFiles(dir: string): string[] {
  try {
    return listSpool(dir);
  } catch {
    // A spool that cannot be read now holds no exit of this launch we can see: look again at the next poll.
    return [];
  }
}

/** What a launch returns, from the session it found. */
export function launched(launcher: LauncherName, marker: string, session: { name: string; id: string }, window: string | null, terminal: Terminal): Launched {
  return { launcher, marker, sessionName: session.name, sessionId: session.id, window, terminal };
}

/** The line of a failed command's output that says why: robot-army's own message (its prefix removed), else the last line. */
export function failureLine(text: string): string {
  const lines = text.split("\n").map((line) => line.trim()).filter(Boolean);
  const own = lines.find((line) => line.startsWith("robot-army: "));
  return (own ?? lines.at(-1) ?? "").replace(/^robot-army: /, "");
}
