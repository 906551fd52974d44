/**
 * What a session is now, from its record and its holder's liveness (pid plus start time):
 * never from a process name or command line.
 */
import { statSync } from "node:fs";
import { groupLiveness, groupMembersSince, liveness } from "../processes.ts";
import type { ProcessGroup, ProcessIdentity } from "../processes.ts";
import { childIdentity, holderIdentity, sessionFiles } from "./records.ts";
import type { SessionRecord } from "./records.ts";

/**
 * `starting`: the holder has not written its pid yet; `running`: its holder runs;
 * `exited`: an exit is recorded; `vanished`: no exit recorded and the holder is proven
 * gone; `unknown`: the holder cannot be checked, so nothing may act on it.
 */
export type SessionState = "starting" | "running" | "exited" | "vanished" | "unknown";

/** A holder writes its pid within moments of starting; a record without one for this long has no holder. */
const START_GRACE_MS = 60_000;

/** The state of a session as of now. */
export function sessionState(root: string, record: SessionRecord): SessionState {
  if (record.exitedAt) return "exited";
  if (record.holderPid === null) {
    let age: number;
    try {
      age = Date.now() - statSync(sessionFiles(root, record.id).record).mtimeMs;
    } catch {
      return "unknown";
    }
    return age < START_GRACE_MS ? "starting" : "vanished";
  }
  const holder = liveness(holderIdentity(record) as ProcessIdentity);
  if (holder === "running") return "running";
  return holder === "exited" ? "vanished" : "unknown";
}

/** Whether the session's child process is still the one recorded and running. */
export function childRunning(record: SessionRecord): boolean | undefined {
  if (record.childPid === null) return false;
  const state = liveness(childIdentity(record) as ProcessIdentity);
  return state === "unknown" ? undefined : state === "running";
}

/**
 * Whether any process the session's command started still runs: the child itself, or a
 * process started since the child in the child's process group (the one its holder made
 * for a detached session, or the terminal's it shares in the foreground), which outlives
 * the child when the child left work running in the background. undefined when that
 * cannot be told.
 */
export function commandRuns(record: SessionRecord): boolean | undefined {
  const child = childRunning(record);
  if (child === true) return true;
  const group = groupOf(record);
  if (group === undefined) return child;
  const members = groupLiveness(group, record.childStartId);
  if (members === "running") return true;
  return child === undefined || members === "unknown" ? undefined : false;
}

/** The child's process group as recorded; undefined for a record that has none (older ones, a failed start). */
function groupOf(record: SessionRecord): ProcessGroup | undefined {
  if (record.childPgid !== null && record.childPgid === record.childPid) {
    return { pgid: record.childPgid, leader_start_id: record.childStartId ?? null };
  }
  const pgid = record.sharedPgid;
  if (typeof pgid !== "number") return undefined;
  // The holder shares that group: what its own process started there is none of the command's.
  const holder = record.holderPid !== null && record.childPid !== null
    ? { holder: { pid: record.holderPid, start_id: record.holderStartId ?? null, child_pid: record.childPid } }
    : {};
  return { pgid, leader_start_id: record.sharedPgidLeaderStartId ?? null, ...holder };
}

/**
 * The processes the session's command started that still run in its process group, by pid
 * (each known by its start, never by name): none with proof that none does, "unknown" when
 * that cannot be told (a record with no group on record, a group that cannot be read).
 */
export function leftRunning(record: SessionRecord): number[] | "unknown" {
  const group = groupOf(record);
  return group === undefined ? "unknown" : groupMembersSince(group, record.childStartId);
}

/**
 * Whether a session's worker may still run: its holder runs (or is starting), or any
 * process its command started is proven still running, whether the holder is gone or
 * recorded the child's exit. "unknown" when a vanished holder's command cannot be checked,
 * or when an exit was recorded while what the command started still ran (or could not be
 * read) and that cannot be checked now: callers treat it like running, for unknown is never
 * "dead".
 */
export function workerRuns(root: string, record: SessionRecord): boolean | "unknown" {
  const state = sessionState(root, record);
  if (state === "starting" || state === "running") return true;
  if (state === "unknown") return "unknown";
  const runs = commandRuns(record);
  if (state === "exited") {
    // An exit on record is evidence the child ended; only a group member proven running outweighs it...
    if (!record.membersAtExit) return runs === true;
    // ...unless the exit was recorded with members left (or unread): then only proof that none runs is "not running".
    if (groupOf(record) === undefined) return "unknown";
    return runs ?? "unknown";
  }
  return runs ?? "unknown";
}
