/**
 * The exit spool, `<state dir>/spool/`: a worker session's holder writes the session's
 * exit record here before anything of the session is reaped, so the supervisor learns
 * how a worker ended even when it was down at the time. This module owns the file format:
 * one `<session id>.<generation>.json` per exit, written atomically here and read only
 * through the functions below.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic.ts";
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
}

/** How a worker ended: the facts an exit record holds, whether read from the spool or from the session's own record. */
export type Exit = Pick<ExitRecord, "ended" | "code" | "signal" | "at">;

/** One file in the spool: its name, its path, and its exit record (undefined when it cannot be read). */
export interface SpooledExit {
  file: string;
  path: string;
  exit: ExitRecord | undefined;
}

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
export function exitOf(record: Pick<SessionRecord, "ended" | "exitCode" | "exitSignal" | "exitedAt">): Exit {
  return { ended: record.ended ?? "exited", code: record.exitCode, signal: record.exitSignal, at: record.exitedAt ?? "" };
}

/** The spool's file names, oldest name first; none when the folder is not there. A folder that cannot be read throws. */
export function spoolFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith(".json") && !name.startsWith(".")).sort();
}

/** Every exit record in the spool, oldest name first, each read and checked. */
export function spooledExits(dir: string, files: string[] = spoolFiles(dir)): SpooledExit[] {
  return files.map((file) => ({ file, path: join(dir, file), exit: readSpooledExit(join(dir, file)) }));
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
 * what it says (`exit` undefined when it cannot be read); undefined when none is there.
 */
export function spooledExitOf(dir: string, sessionId: string): { path: string; exit: ExitRecord | undefined } | undefined {
  const generation = (file: string) => Number(file.split(".")[1]);
  const file = spoolFiles(dir).filter((name) => name.split(".")[0] === sessionId).sort((a, b) => generation(a) - generation(b)).at(-1);
  if (!file) return undefined;
  const path = join(dir, file);
  const exit = readSpooledExit(path);
  return { path, exit: exit?.session_id === sessionId ? exit : undefined };
}

/** One exit record; undefined when it cannot be read or is not one. */
export function readSpooledExit(path: string): ExitRecord | undefined {
  try {
    const exit = JSON.parse(readFileSync(path, "utf8")) as ExitRecord;
    return typeof exit.session_id === "string" && typeof exit.ended === "string" ? exit : undefined;
  } catch {
    return undefined;
  }
}

function spoolFileName(id: string, generation: number): string {
  return `${id}.${generation}.json`;
}
