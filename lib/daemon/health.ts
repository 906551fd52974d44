/**
 * The dead man's switch: whether the daemon of a state dir is alive and ticking, judged from
 * outside it, from its lock (`daemon.lock`: which process, since when), its heartbeat
 * (`heartbeat.json`: when it last ticked) and the process table (by pid plus start time,
 * never by name: DESIGN rule 6). A file that cannot be read, or a process that cannot be
 * checked, is `UNREADABLE`: never taken for ok, never for dead (rule 1).
 */
import { now as clockNow, parseTimestamp } from "../clock.ts";
import { formatAge } from "../duration.ts";
import { liveness } from "../processes.ts";
import type { Liveness } from "../processes.ts";
import { heartbeatPath, readHeartbeatFile } from "./heartbeat.ts";
import type { Heartbeat } from "./heartbeat.ts";
import { lockPath, readLock } from "./lock.ts";
import type { LockContent } from "./lock.ts";

/** The verdicts, `ok` the only good one. */
export const HEALTH_VERDICTS = ["ok", "STARTING", "NEVER STARTED", "STOPPED", "DIED", "HUNG", "UNREADABLE"] as const;
export type HealthVerdict = (typeof HEALTH_VERDICTS)[number];

/** What the check found: the verdict, one line saying why and what to run, and the facts behind it. */
export interface Health {
  verdict: HealthVerdict;
  /** One line naming the pid, the ages and the files, and what to run. */
  detail: string;
  /** The lock's pid, or the heartbeat's when there is no lock; null when neither names one. */
  pid: number | null;
  /** When the heartbeat was written, as it says. */
  heartbeat_at: string | null;
  /** How old the heartbeat is, in whole seconds. */
  age_s: number | null;
  max_age_s: number;
}

/** What the check reads besides the files: the clock and the process table (tests give their own). */
export interface HealthProbes {
  now?: Date;
  liveness?: (holder: LockContent) => Liveness;
}

/** How far ahead of this clock a heartbeat may be stamped and still be read (clocks of one machine agree; a little slack for a write racing the read). */
export const FUTURE_SKEW_MS = 60_000;

const RUN = '"robot-army run"';
const LOG = '"robot-army log"';
const STATUS = '"robot-army status"';

/**
 * Judges the daemon of `stateDir`; a heartbeat older than `maxAgeMs` is stale. Reads only.
 * @example checkHealth(stateDirPath(), parseDuration(config.health.max_age)).verdict // "ok"
 */
export function checkHealth(stateDir: string, maxAgeMs: number, probes: HealthProbes = {}): Health {
  const now = probes.now ?? clockNow();
  const lockFile = lockPath(stateDir);
  const beatFile = heartbeatPath(stateDir);
  const lock = readLock(lockFile);
  const beat = readHeartbeatFile(stateDir);
  const beatAt = typeof beat === "object" ? parseTimestamp(beat.at) : undefined;
  const ageMs = beatAt ? now.getTime() - beatAt.getTime() : null;
  const base = {
    pid: typeof lock === "object" ? lock.pid : typeof beat === "object" ? beat.pid : null,
    heartbeat_at: typeof beat === "object" ? beat.at : null,
    age_s: ageMs === null ? null : Math.floor(ageMs / 1000),
    max_age_s: Math.floor(maxAgeMs / 1000),
  };
  const verdict = (v: HealthVerdict, detail: string): Health => ({ verdict: v, detail, ...base });
  const maxAge = formatAge(maxAgeMs);

  if (lock === "unreadable") {
    return verdict("UNREADABLE", `the daemon lock ${lockFile} cannot be read, so whether a daemon runs cannot be checked: look at the file, and remove it only once no daemon runs; then ${RUN}`);
  }
  if (beat === "unreadable" || (typeof beat === "object" && !beatAt)) {
    return verdict("UNREADABLE", `the heartbeat ${beatFile} cannot be read, so when the daemon last ticked cannot be told: look at the file; ${STATUS} and ${LOG} say what the daemon did last`);
  }
  // A heartbeat from the future says nothing of when the daemon last ticked (a clock set wrong, a file written by hand).
  if (ageMs !== null && ageMs < -FUTURE_SKEW_MS) {
    return verdict("UNREADABLE", `the heartbeat ${beatFile} is stamped ${(beat as Heartbeat).at}, ${formatAge(-ageMs)} ahead of this clock, so when the daemon last ticked cannot be told: check the clock and the file; ${STATUS} and ${LOG} say what the daemon did last`);
  }
  if (lock === "gone") {
    if (beat === "missing") return verdict("NEVER STARTED", `no daemon has run with this state dir (no ${lockFile}, no ${beatFile}): start one with ${RUN}`);
    const last = describeBeat(beat, ageMs!);
    // Stopped on purpose (its heartbeat says so as it stopped): not a death, though nothing runs, which a reboot's SIGTERM does too.
    if (beat.stopped) {
      return verdict("STOPPED", `the daemon (pid ${beat.pid}) was stopped (${beat.stopped.reason}) at ${beat.stopped.at}, and no daemon runs since: start it again with ${RUN}`);
    }
    if (ageMs! <= maxAgeMs) return verdict("ok", `no daemon holds the lock, and the last tick (pid ${beat.pid}) was ${ago(ageMs!)}, within ${maxAge}: a "run --once" from a timer, or a daemon just stopped`);
    return verdict("DIED", `no daemon holds the lock and ${last}, older than ${maxAge}: start it again with ${RUN}; ${LOG} says what it did last`);
  }
  const state = (probes.liveness ?? liveness)(lock);
  if (state === "unknown") {
    return verdict("UNREADABLE", `the daemon lock ${lockFile} names pid ${lock.pid}, which cannot be checked (no start time to compare, or no /proc): ${STATUS} says more`);
  }
  if (state === "exited") {
    const last = typeof beat === "object" ? `; ${describeBeat(beat, ageMs!)}` : "; it never wrote a heartbeat";
    return verdict("DIED", `the daemon (pid ${lock.pid}, lock ${lockFile} taken ${lock.at || "at an unknown time"}) is gone${last}: start it again with ${RUN}; ${LOG} says what it did last`);
  }
  const takenAt = parseTimestamp(lock.at);
  const own = typeof beat === "object" && beat.pid === lock.pid && (!takenAt || beatAt!.getTime() >= takenAt.getTime());
  if (!own) {
    if (!takenAt) return verdict("UNREADABLE", `the daemon lock ${lockFile} (pid ${lock.pid}, running) says no time it was taken, and the daemon has not ticked: how long it has been starting cannot be told; ${STATUS} says more`);
    const lockAge = now.getTime() - takenAt.getTime();
    if (lockAge <= maxAgeMs) return verdict("STARTING", `the daemon (pid ${lock.pid}) took the lock ${ago(lockAge)} and has not ticked yet (no heartbeat of it in ${beatFile}): ask again in a minute; ${STATUS} says more`);
    return verdict("HUNG", `the daemon (pid ${lock.pid}) took the lock ${ago(lockAge)} and has not ticked since (no heartbeat of it in ${beatFile}), longer than ${maxAge}: ${LOG} says where it stopped; stop it and start it again with ${RUN}`);
  }
  // A daemon whose ticks are further apart than max_age is not hung before its next one is due, nor while
  // that tick runs (the heartbeat is written at a tick's end): max_age past the tick it announced.
  const nextAt = parseTimestamp(beat.next_at);
  if (ageMs! > maxAgeMs && nextAt && now.getTime() <= nextAt.getTime() + maxAgeMs) {
    return verdict("ok", `the daemon (pid ${lock.pid}) runs; its last tick (${beat.tick}) was ${ago(ageMs!)}, and the next is due at ${beat.next_at}`);
  }
  if (ageMs! > maxAgeMs) {
    return verdict("HUNG", `the daemon (pid ${lock.pid}) runs but ${describeBeat(beat, ageMs!)}, older than ${maxAge}: ${LOG} says where it stopped; stop it and start it again with ${RUN}`);
  }
  return verdict("ok", `the daemon (pid ${lock.pid}) runs, and its last tick (${beat.tick}) was ${ago(ageMs!)}, within ${maxAge}`);
}

/** `its last heartbeat (tick 3, at ...) is 2h ago (<file>)`, for the detail lines. */
function describeBeat(beat: Heartbeat, ageMs: number): string {
  return `the last heartbeat (pid ${beat.pid}, tick ${beat.tick}, at ${beat.at}) is ${formatAge(Math.max(0, ageMs))} old`;
}

function ago(ms: number): string {
  return ms <= 0 ? "just now" : `${formatAge(ms)} ago`;
}
