/**
 * Whether a worker is idle, measured, never assumed (DESIGN rule 1): read from its episode in
 * its worktree's journal (`.ai/local/state/sessions-open/<episode key>.yaml`, the key its
 * session was given) and from nothing else. Idle only when the status is exactly `idle` and
 * `status_changed_at` is a valid time not in the future; anything else (busy, a malformed or
 * absent time, no episode, a journal that cannot be read, a symbolic link, a profile with no
 * registry) is not idle, with a one-line why, and the question is asked again next pass.
 * Being wrong about that file can delay a retirement; it can never cause one. The same reader
 * (`readRegistry`) tells the needs_info step whether a worker waits for its owner.
 */
import { isoSeconds, parseTimestamp } from "../clock.ts";
import { formatAge } from "../duration.ts";
import type { WorkerProfile } from "../config.ts";
import { noRegistryLine } from "../worker-profiles.ts";
import { journalAt } from "../episodes/journal.ts";
import { findOpen } from "../episodes/open-episodes.ts";
import type { EpisodeStatus } from "../episodes/open-episodes.ts";
import type { StoredSession } from "./sessions.ts";

/** A worker's idleness: idle since when and for how long, or why it is not taken for idle. */
export type Idleness = { idle: true; since: string; seconds: number } | { idle: false; why: string };

/**
 * What a worker's registry says: its episode's status, as written, since when (as written:
 * not checked to be a time), and the question while it is `needs_info`; or why it cannot be
 * read, which is unknown and never any status.
 */
export type Registry =
  | { known: true; status: EpisodeStatus; changedAt: string; reason: string | null; agentSession: string | null }
  | { known: false; why: string };

/** Reads the registry of a session's worker: the open file of the episode its key names, in its worktree. */
export async function readRegistry(session: StoredSession, profile: WorkerProfile): Promise<Registry> {
  const unobservable = noRegistryLine(profile);
  if (unobservable !== null) return { known: false, why: unobservable };
  const key = session.episode_key;
  let entry;
  try {
    entry = await findOpen(journalAt(session.worktree), key);
  } catch (error) {
    return { known: false, why: `the journal in ${session.worktree} cannot be read: ${firstLine(error)}` };
  }
  if (!entry) return { known: false, why: `no open episode "${key}" in ${session.worktree}` };
  if (!entry.episode) return { known: false, why: `the open episode "${key}" ${entry.problem}` };
  const { status, status_changed_at: changedAt, needs_info_reason: reason, agent_session_id: agentSession } = entry.episode;
  return { known: true, status, changedAt, reason: reason ?? null, agentSession: agentSession ?? null };
}

/** Reads the idleness of a session's worker at `at` from its episode's open file. */
export async function workerIdleness(session: StoredSession, profile: WorkerProfile, at: Date): Promise<Idleness> {
  const registry = await readRegistry(session, profile);
  if (!registry.known) return notIdle(registry.why);
  const key = session.episode_key;
  const { status, changedAt: changed } = registry;
  // needs_info is a worker waiting for its owner's answer: not idle, so never retired for it.
  if (status !== "idle") return notIdle(`episode "${key}" is ${JSON.stringify(status)}, not idle`);
  const since = parseTimestamp(changed);
  if (!since) return notIdle(`episode "${key}" is idle since ${JSON.stringify(changed)}, which is not a time`);
  const seconds = Math.floor((at.getTime() - since.getTime()) / 1000);
  if (seconds < 0) return notIdle(`episode "${key}" is idle since ${isoSeconds(since)}, which is in the future`);
  return { idle: true, since: isoSeconds(since), seconds };
}

/** What a worker is doing, as its registry says at a moment: busy, idle or asking its owner since when, or unknown with why. */
export type Activity =
  | { status: EpisodeStatus; since: string | null; seconds: number | null }
  | { status: "unknown"; why: string };

/** The registry's word on a worker at `at`, for the owner to read (status, show, the dashboard); unknown stays unknown, with why. */
export async function workerActivity(session: StoredSession, profile: WorkerProfile, at: Date): Promise<Activity> {
  return activityOf(await readRegistry(session, profile), at);
}

/** A registry already read, as the owner's activity at `at`. */
export function activityOf(registry: Registry, at: Date): Activity {
  if (!registry.known) return { status: "unknown", why: registry.why };
  if (registry.status !== "idle" && registry.status !== "busy" && registry.status !== "needs_info") return { status: "unknown", why: `its episode says ${JSON.stringify(registry.status)}` };
  const since = parseTimestamp(registry.changedAt);
  const seconds = since ? Math.floor((at.getTime() - since.getTime()) / 1000) : null;
  return { status: registry.status, since: since ? registry.changedAt : null, seconds: seconds !== null && seconds >= 0 ? seconds : null };
}

/**
 * An activity in words.
 * @example describeActivity({ status: "busy", since: "2026-01-15T10:00:00Z", seconds: 180 }) // "busy for 3m (since 2026-01-15T10:00:00Z)"
 */
export function describeActivity(activity: Activity): string {
  if (activity.status === "unknown") return `unknown: ${activity.why}`;
  const word = activity.status === "needs_info" ? "asks you" : activity.status;
  if (activity.since === null) return `${word} (since a time that cannot be read)`;
  return `${word}${activity.seconds !== null ? ` for ${formatAge(activity.seconds * 1000)}` : ""} (since ${activity.since})`;
}

function notIdle(why: string): Idleness {
  return { idle: false, why };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0];
}
