/**
 * The exit spool, `<state dir>/spool/`: a worker session's holder writes the session's
 * exit record here before anything of the session is reaped, so the supervisor learns
 * how a worker ended even when it was down at the time. This module owns the file format:
 * one `<session id>.<generation>.json` per exit, written atomically here and read only
 * through the functions below.
 */
import { existsSync, linkSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../atomic.ts";
import { parseTimestamp } from "../clock.ts";
import { describeProblem, validatorFor } from "../schema.ts";
import { makePrivateDir, stateDirPath } from "../state-dir.ts";
import type { SessionRecord } from "./records.ts";

/** What the supervisor reads of a worker's exit. */
export interface ExitRecord {
  session_id: string;
  name: string;
  item: string;
  generation: number;
  ended: string;
  code: number | null;
  signal: string | null;
  at: string;
  /** The command the session ran (its argv[0]): what an exit 126 or 127 names. Absent in records written before it was kept. */
  command?: string;
  /** How long the command ran, in seconds, on its holder's own clock: what tells an exit within seconds of the start. */
  ran_seconds?: number;
  /** The last lines (at most 20) it printed, from its log or its tmux pane, as it left them: not yet redacted. */
  last_lines?: string[];
}

/** How a worker ended: the facts an exit record holds, whether read from the spool or from the session's own record. */
export type Exit = Pick<ExitRecord, "ended" | "code" | "signal" | "at" | "command" | "ran_seconds" | "last_lines">;

/** One file in the spool: its name, its path, and its exit record, or what is wrong with it (`exit` undefined). */
export interface SpooledExit {
  file: string;
  path: string;
  exit: ExitRecord | undefined;
  /** Why the file is not an exit record (unreadable, not JSON, or failing `schema/exit-record.schema.json`). */
  problem?: string;
}

/** An exit record read and checked: the record, or what is wrong with the file. */
export type ReadExit = { exit: ExitRecord; problem?: undefined } | { exit?: undefined; problem: string };

/** The folder beside the spool's files where damaged ones are set aside: never deleted, never read as exits. */
export const DAMAGED_DIR = "damaged";

/** The spool folder. */
export function spoolDir(env: Record<string, string | undefined> = process.env): string {
  return join(stateDirPath(env), "spool");
}

/** Writes a worker's exit record atomically; returns its path. */
export function spoolExit(record: SessionRecord, env: Record<string, string | undefined> = process.env): string {
  const dir = spoolDir(env);
  makePrivateDir(dir);
  const exit: ExitRecord = { session_id: record.id, name: record.name, item: record.tags.ra_item, generation: record.generation, ...exitOf(record) };
  const path = join(dir, spoolFileName(record.id, record.generation));
  writeFileAtomic(path, JSON.stringify(exit, null, 2) + "\n", { private: true });
  return path;
}

/** How a session ended, from its own record: the same facts its spooled exit record holds. */
export function exitOf(
  record: Pick<SessionRecord, "ended" | "exitCode" | "exitSignal" | "exitedAt"> & Partial<Pick<SessionRecord, "ranSeconds" | "lastLines">> & { command?: string },
): Exit {
  const exit: Exit = { ended: record.ended ?? "exited", code: record.exitCode, signal: record.exitSignal, at: record.exitedAt ?? "" };
  if (record.command) exit.command = record.command;
  if (record.ranSeconds !== undefined) exit.ran_seconds = record.ranSeconds;
  if (record.lastLines?.length) exit.last_lines = record.lastLines.slice(-20);
  return exit;
}

/** The spool's file names, oldest name first; none when the folder is not there. A folder that cannot be read throws. */
export function spoolFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith(".json") && !name.startsWith(".")).sort();
}

/**
 * Every exit record in the spool, in the order they were written (by the file's time, then its
 * name: a drain tells of exits as they happened, the same way every run), each read and checked
 * against its schema.
 */
export async function spooledExits(dir: string, files: string[] = spoolFiles(dir)): Promise<SpooledExit[]> {
  const exits: SpooledExit[] = [];
  const written = new Map(files.map((file) => [file, writtenAt(join(dir, file))]));
  const ordered = [...files].sort((a, b) => written.get(a)! - written.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
  for (const file of ordered) {
    const path = join(dir, file);
    const { exit, problem } = await readExitRecord(path);
    exits.push({ file, path, exit, ...(problem === undefined ? {} : { problem }) });
  }
  return exits;
}

/** When a spool file was written (its modification time, in ms); a file gone meanwhile sorts last. */
function writtenAt(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}

/** The ids of the sessions with an exit record in the spool; undefined when the spool cannot be read (unknown is not "none"). */
export function spooledSessions(dir: string): Set<string> | undefined {
  try {
    return new Set(spoolFiles(dir).map((file) => file.split(".")[0]));
  } catch {
    return undefined;
  }
}

/** Deletes an exit record once the store has what it says. */
export function removeSpooled(path: string): void {
  rmSync(path, { force: true });
}

/**
 * The newest exit record spooled for one session (the highest generation): where it is and
 * what it says (`exit` undefined, and `problem` set, when it is not a valid exit record of
 * this session); undefined when none is there.
 */
export async function spooledExitOf(dir: string, sessionId: string): Promise<{ path: string; exit: ExitRecord | undefined; problem?: string } | undefined> {
  const generation = (file: string) => Number(file.split(".")[1]);
  const file = spoolFiles(dir).filter((name) => name.split(".")[0] === sessionId).sort((a, b) => generation(a) - generation(b)).at(-1);
  if (!file) return undefined;
  const path = join(dir, file);
  const { exit, problem } = await readExitRecord(path);
  if (exit && exit.session_id !== sessionId) return { path, exit: undefined, problem: `it names session "${exit.session_id}"` };
  return { path, exit, ...(problem === undefined ? {} : { problem }) };
}

/**
 * One exit record, read and validated against `schema/exit-record.schema.json`, so nothing
 * malformed (a code that is not a number, a time that is not a time) reaches the store; a
 * record whose session and generation are not the ones its file is named for is a problem too.
 */
export async function readExitRecord(path: string): Promise<ReadExit> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return { problem: `it cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  if (text.trim() === "") return { problem: "it is empty" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "it is not JSON" };
  }
  const problems = (await validatorFor("exit-record"))(value);
  if (problems.length > 0) return { problem: `it is not an exit record: ${problems.map(describeProblem).join("; ")}` };
  const exit = value as ExitRecord;
  if (parseTimestamp(exit.at) === undefined) return { problem: `it is not an exit record: /at "${exit.at}" is not a time` };
  // The drain closes the session the record names: a copy under another session's name would close that one from it.
  if (basename(path) !== spoolFileName(exit.session_id, exit.generation)) {
    return { problem: `it is the exit record of session ${exit.session_id} generation ${exit.generation}, not of the one its name tells` };
  }
  return { exit };
}

/**
 * One exit record, loosely: what names the session (`session_id`, `name`, `item`) without
 * the schema's check; undefined when it cannot be read. For telling which launch a record
 * belongs to, never for storing how the session ended (readExitRecord is for that).
 */
export function readSpooledExit(path: string): ExitRecord | undefined {
  try {
    const exit = JSON.parse(readFileSync(path, "utf8")) as ExitRecord;
    return typeof exit.session_id === "string" && typeof exit.ended === "string" ? exit : undefined;
  } catch {
    return undefined;
  }
}

/** The session id a spool file's name gives (`<id>.<generation>.json`); undefined when the name is not of that form. */
export function sessionOfSpoolFile(file: string): string | undefined {
  const match = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[1-9][0-9]*\.json$/.exec(file);
  return match?.[1];
}

/**
 * Moves a damaged spool file into `damaged/` beside it, never over another file (a name
 * already taken there gets a suffix: `.2`, `.3`, ...); returns where it is now.
 */
export function setAsideDamaged(path: string): string {
  const dir = join(dirname(path), DAMAGED_DIR);
  makePrivateDir(dir);
  for (let n = 1; ; n++) {
    const target = join(dir, n === 1 ? basename(path) : `${basename(path)}.${n}`);
    try {
      // A hard link fails on a name already taken, where a rename would replace the file there.
      linkSync(path, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    rmSync(path, { force: true });
    return target;
  }
}

/** Where setAsideDamaged has put copies of the spool file at `path`, oldest name first (none when it never set one aside). */
export function setAsideCopies(path: string): string[] {
  const dir = join(dirname(path), DAMAGED_DIR);
  const name = basename(path);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((file) => file === name || file.startsWith(`${name}.`)).sort().map((file) => join(dir, file));
}

function spoolFileName(id: string, generation: number): string {
  return `${id}.${generation}.json`;
}
