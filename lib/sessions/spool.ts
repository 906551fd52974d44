/**
 * The exit spool, `<state dir>/spool/`: a worker session's holder writes the session's
 * exit record here before anything of the session is reaped, so the supervisor learns
 * how a worker ended even when it was down at the time.
 */
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

/** The spool folder. */
export function spoolDir(env: Record<string, string | undefined> = process.env): string {
  return join(stateDirPath(env), "spool");
}

/** Writes a worker's exit record atomically; returns its path. */
export function spoolExit(record: SessionRecord, env: Record<string, string | undefined> = process.env): string {
  const dir = spoolDir(env);
  makePrivateDir(dir);
  const exit: ExitRecord = {
    session_id: record.id,
    name: record.name,
    item: record.tags.ra_item,
    generation: record.generation,
    ended: record.ended ?? "exited",
    code: record.exitCode,
    signal: record.exitSignal,
    at: record.exitedAt ?? "",
  };
  const path = join(dir, `${record.id}.${record.generation}.json`);
  writeFileAtomic(path, JSON.stringify(exit, null, 2) + "\n");
  return path;
}
