/**
 * Whether a worker is idle, measured, never assumed (DESIGN rule 1): read from its episode in
 * its worktree's journal (`.ai/local/state/sessions-open/<episode key>.yaml`, the key its
 * session was given) and from nothing else. Idle only when the status is exactly `idle` and
 * `status_changed_at` is a valid time not in the future; anything else (busy, a malformed or
 * absent time, no episode, a journal that cannot be read, a symbolic link, a profile with no
 * registry) is not idle, with a one-line why, and the question is asked again next pass.
 * Being wrong about that file can delay a retirement; it can never cause one.
 */
import { isoSeconds, parseTimestamp } from "../clock.ts";
import type { WorkerProfile } from "../config.ts";
import { hasRegistry } from "../dispatch/profiles.ts";
import { journalAt } from "../episodes/journal.ts";
import { findOpen } from "../episodes/open-episodes.ts";
import type { StoredSession } from "../work-items/sessions.ts";

/** A worker's idleness: idle since when and for how long, or why it is not taken for idle. */
export type Idleness = { idle: true; since: string; seconds: number } | { idle: false; why: string };

/** Reads the idleness of a session's worker at `at` from its episode's open file. */
export async function workerIdleness(session: StoredSession, profile: WorkerProfile, at: Date): Promise<Idleness> {
  if (!hasRegistry(profile)) return notIdle("its worker profile is generic, which keeps no registry");
  const key = session.episode_key;
  let entry;
  try {
    entry = await findOpen(journalAt(session.worktree), key);
  } catch (error) {
    return notIdle(`the journal in ${session.worktree} cannot be read: ${firstLine(error)}`);
  }
  if (!entry) return notIdle(`no open episode "${key}" in ${session.worktree}`);
  if (!entry.episode) return notIdle(`the open episode "${key}" ${entry.problem}`);
  const { status, status_changed_at: changed } = entry.episode;
  if (status !== "idle") return notIdle(`episode "${key}" is ${JSON.stringify(status)}, not idle`);
  const since = parseTimestamp(changed);
  if (!since) return notIdle(`episode "${key}" is idle since ${JSON.stringify(changed)}, which is not a time`);
  const seconds = Math.floor((at.getTime() - since.getTime()) / 1000);
  if (seconds < 0) return notIdle(`episode "${key}" is idle since ${isoSeconds(since)}, which is in the future`);
  return { idle: true, since: isoSeconds(since), seconds };
}

function notIdle(why: string): Idleness {
  return { idle: false, why };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0];
}
