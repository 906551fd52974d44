/**
 * The on-disk record of managed sessions, in the session root (`$RA_SESSION_ROOT`, else
 * `<state dir>/sessions`, created 0700): `<id>.json` (the record, rewritten atomically),
 * `<id>.events.jsonl` (start, exit, tag, kill, respawn), `<id>.log` (the output) and
 * `<id>.lock` while someone changes it. Every file is created 0600: records hold commands,
 * environments and output.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { appendLine, writeFileAtomic } from "../atomic.ts";
import { isoSeconds, now } from "../clock.ts";
import { PreconditionError, UsageError } from "../errors.ts";
import type { ProcessIdentity } from "../processes.ts";
import { ensureStateDir, makePrivateDir, stateDirPath } from "../state-dir.ts";

type Env = Record<string, string | undefined>;

/** How a session ended. `vanished` is never recorded: it is what a record without an exit and without a holder is. */
export type Ending = "exited" | "crashed" | "killed" | "abandoned" | "failed-to-start";

/** A managed session as `<id>.json` holds it. */
export interface SessionRecord {
  schema: 1;
  id: string;
  name: string;
  command: string;
  args: string[];
  cwd: string;
  /** Variables given with `--env`, on top of the environment the session was started from. */
  env: Record<string, string>;
  tags: Record<string, string>;
  permanent: boolean;
  ephemeral: boolean;
  /** Bumped by each respawn, so a stale gc pass never acts on a session that replaced the one it saw. */
  generation: number;
  startedAt: string;
  holderPid: number | null;
  holderStartedAt: string | null;
  /** The holder's `<boot id>:<start ticks>` (see ProcessIdentity.start_id); absent in older records. */
  holderStartId?: string | null;
  childPid: number | null;
  childStartedAt: string | null;
  /** The child's `<boot id>:<start ticks>`; absent in older records. */
  childStartId?: string | null;
  /** The process group the holder made for the child (a detached session), else null. */
  childPgid: number | null;
  /**
   * The process group a foreground child shares with its holder (the terminal's), read to
   * tell whether what the child started still runs, never signalled; absent for a detached
   * session (see childPgid) and in older records.
   */
  sharedPgid?: number | null;
  /** The `<boot id>:<start ticks>` of that group's leader when the child started, if it could be read. */
  sharedPgidLeaderStartId?: string | null;
  killRequestedAt: string | null;
  /**
   * When the child exited while processes it started still ran in its group: the session
   * has not ended until they do, and `exitedAt` is when its holder saw the last of them go.
   * Absent when the child's exit was the session's end.
   */
  childExitedAt?: string | null;
  /**
   * What ran on in the child's group when the exit was recorded: `remained` when the holder
   * was stopped while members still ran in a group it did not make, `unknown` when that could
   * not be read. Absent when nothing the command started was left running.
   */
  membersAtExit?: "remained" | "unknown";
  exitedAt: string | null;
  exitCode: number | null;
  exitSignal: string | null;
  ended: Ending | null;
  startError: string | null;
  /** Its output's last lines (at most 20) when it ended: from its log, or from its tmux pane. */
  lastLines: string[];
  /** How long its command ran, in seconds, as its holder measured it (not robot-army's clock); absent until it ended, and in older records. */
  ranSeconds?: number;
  /**
   * Where a foreground session's output went instead of the log: a tmux pane (whose
   * contents `peek` reads) or another terminal. Absent for a session that logs its output.
   */
  terminal?: TerminalRef | null;
  log: string;
}

/** The session root: `$RA_SESSION_ROOT`, else `<state dir>/sessions`. */
export function sessionRoot(env: Env = process.env): string {
  return env.RA_SESSION_ROOT ? resolve(env.RA_SESSION_ROOT) : join(stateDirPath(env), "sessions");
}

/** The session root, created 0700 when missing. */
export function ensureSessionRoot(env: Env = process.env): string {
  if (!env.RA_SESSION_ROOT) ensureStateDir(env);
  const root = sessionRoot(env);
  makePrivateDir(root);
  return root;
}

/** The files of one session. */
export function sessionFiles(root: string, id: string) {
  return {
    record: join(root, `${id}.json`),
    events: join(root, `${id}.events.jsonl`),
    log: join(root, `${id}.log`),
    lock: join(root, `${id}.lock`),
  };
}

/**
 * Reads one record; undefined when it is gone (reaped or removed). A file that is not JSON,
 * JSON that is not a record (`null`, `{}`, a field of the wrong type), or a record of
 * another session's id cannot be read: nothing downstream is handed half a record, or
 * another session's, to act on.
 */
export function readRecord(root: string, id: string): SessionRecord | undefined {
  const file = sessionFiles(root, id).record;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new PreconditionError(`Session record "${file}" cannot be read: ${(error as Error).message}`);
  }
  const problem = recordProblem(value);
  if (problem) throw new PreconditionError(`Session record "${file}" cannot be read: it is not a session record (${problem})`);
  // What is done to a session is done to the files its id names: a record under another's name would have that one's removed.
  const record = value as SessionRecord;
  if (record.id !== id) throw new PreconditionError(`Session record "${file}" cannot be read: it names session "${record.id}", not the "${id}" its file is named for`);
  return record;
}

/** The fields every reader of a record relies on, by the type each must have. */
const RECORD_FIELDS: Record<string, "string" | "number" | "boolean" | "strings" | "map" | "string?" | "number?"> = {
  id: "string", name: "string", command: "string", args: "strings", cwd: "string", env: "map", tags: "map",
  permanent: "boolean", ephemeral: "boolean", generation: "number", startedAt: "string",
  holderPid: "number?", holderStartedAt: "string?", childPid: "number?", childStartedAt: "string?", childPgid: "number?",
  killRequestedAt: "string?", exitedAt: "string?", exitCode: "number?", exitSignal: "string?", ended: "string?",
  startError: "string?", lastLines: "strings", log: "string",
};

/** What makes a parsed value no session record, or undefined when it is one. */
function recordProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not an object";
  const record = value as Record<string, unknown>;
  for (const [field, kind] of Object.entries(RECORD_FIELDS)) {
    const v = record[field];
    const ok = kind === "strings" ? Array.isArray(v) && v.every((e) => typeof e === "string")
      : kind === "map" ? typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every((e) => typeof e === "string")
      : kind.endsWith("?") ? v === null || typeof v === kind.slice(0, -1)
      : typeof v === kind;
    if (!ok) return v === undefined ? `"${field}" is missing` : `"${field}" is not ${KIND_TEXT[kind]}`;
  }
  return undefined;
}

const KIND_TEXT = { string: "a string", number: "a number", boolean: "true or false", strings: "a list of strings", map: "a table of strings", "string?": "a string or null", "number?": "a number or null" };

/** Writes a record atomically. */
export function writeRecord(root: string, record: SessionRecord): void {
  writeFileAtomic(sessionFiles(root, record.id).record, JSON.stringify(record, null, 2) + "\n", { private: true });
}

/** Every readable record in the root, oldest first; unreadable ones are left to `unreadableRecords`. */
export function listRecords(root: string): SessionRecord[] {
  return scanRecords(root).records;
}

/** Record files that cannot be read, with why: shown by `session ls`, never acted on. */
export function unreadableRecords(root: string): Array<{ file: string; problem: string }> {
  return scanRecords(root).unreadable;
}

/** Every record in the root in one read: the readable ones, oldest first, and the files that cannot be read. */
export function scanRecords(root: string): { records: SessionRecord[]; unreadable: Array<{ file: string; problem: string }> } {
  if (!existsSync(root)) return { records: [], unreadable: [] };
  const ids = readdirSync(root).filter((name) => name.endsWith(".json") && !name.startsWith(".")).map((name) => name.slice(0, -5));
  const records: SessionRecord[] = [];
  const unreadable: Array<{ file: string; problem: string }> = [];
  for (const id of ids) {
    try {
      const record = readRecord(root, id);
      if (record) records.push(record);
    } catch (error) {
      // One damaged record must not hide every other session; nothing acts on this one.
      unreadable.push({ file: sessionFiles(root, id).record, problem: (error as Error).message });
    }
  }
  records.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.name.localeCompare(b.name));
  return { records, unreadable };
}

/** Appends an event to a session's events file. */
export function appendSessionEvent(root: string, id: string, kind: string, data: Record<string, unknown> = {}): void {
  appendLine(sessionFiles(root, id).events, JSON.stringify({ at: isoSeconds(now()), kind, ...data }), { private: true });
}

/** A session's events, oldest first; lines that cannot be read, or are no event (`null`, no kind), are left out. */
export function readSessionEvents(root: string, id: string): Array<{ at: string; kind: string; [key: string]: unknown }> {
  let text: string;
  try {
    text = readFileSync(sessionFiles(root, id).events, "utf8");
  } catch {
    return [];
  }
  return text.split("\n").flatMap((line) => {
    let event: unknown;
    try {
      event = line.trim() ? JSON.parse(line) : undefined;
    } catch {
      return [];
    }
    const isEvent = typeof event === "object" && event !== null && !Array.isArray(event) &&
      typeof (event as { kind?: unknown }).kind === "string" && typeof (event as { at?: unknown }).at === "string";
    return isEvent ? [event as { at: string; kind: string }] : [];
  });
}

/** Removes every file of a session. */
export function removeSessionFiles(root: string, id: string): void {
  const files = sessionFiles(root, id);
  for (const path of [files.log, files.events, files.record]) rmSync(path, { force: true });
}

/**
 * Finds a session by name, id, or an id prefix that only one session has.
 * @example resolveRef(root, "repro1")
 */
export function resolveRef(root: string, ref: string): SessionRecord {
  const records = listRecords(root);
  const exact = records.find((r) => r.name === ref || r.id === ref);
  if (exact) return exact;
  const byPrefix = ref.length >= 4 ? records.filter((r) => r.id.startsWith(ref)) : [];
  if (byPrefix.length === 1) return byPrefix[0];
  if (byPrefix.length > 1) {
    throw new UsageError(`Session "${ref}" is ambiguous: it starts the ids of ${byPrefix.map((r) => r.name).join(", ")}`);
  }
  throw new PreconditionError(`No session "${ref}" on record; "robot-army session ls" lists them`);
}

/** The values of `keep` that mean "do not keep"; any other value keeps the session. */
const NOT_KEPT = new Set(["false", "0", "no", "off"]);

/** Whether a session carries `keep` (any value but false, 0, no, off). */
export function isKept(record: SessionRecord): boolean {
  const value = record.tags.keep;
  return value !== undefined && !NOT_KEPT.has(value.trim().toLowerCase());
}

/**
 * The terminal a foreground session writes to. A tmux pane is named by its server's socket
 * and the pane's id, and `server` (the server's pid and start time, null when tmux did not
 * say) tells that server from a later one on the same socket, whose pane ids start again.
 */
export type TerminalRef = { kind: "tmux"; socket: string; pane: string; server: string | null } | { kind: "tty" };

/** The session's holder as recorded, to check by pid and start (null pid: not started yet). */
export function holderIdentity(record: SessionRecord): Omit<ProcessIdentity, "pid"> & { pid: number | null } {
  return { pid: record.holderPid, started_at: record.holderStartedAt, start_id: record.holderStartId ?? null };
}

/** The session's child (the command) as recorded. */
export function childIdentity(record: SessionRecord): Omit<ProcessIdentity, "pid"> & { pid: number | null } {
  return { pid: record.childPid, started_at: record.childStartedAt, start_id: record.childStartId ?? null };
}
