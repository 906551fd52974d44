/**
 * `session gc`: stateless; each run re-reads every record from disk, then in order stops
 * and removes orphans, records abandoned permanent sessions, respawns permanent sessions
 * that ended (marking those that flap), and sweeps ended sessions nobody keeps. Every
 * action re-reads its session under the session's lock and acts only if it is still the
 * generation and state this pass saw.
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { isoSeconds, now } from "../clock.ts";
import { withLock } from "./lock.ts";
import { isKept, listRecords, unreadableRecords, readRecord, readSessionEvents, removeSessionFiles, sessionFiles, writeRecord, appendSessionEvent } from "./records.ts";
import type { SessionRecord } from "./records.ts";
import { noteRespawn, respawnRecord, startDetached } from "./start.ts";
import { childRunning, commandRuns, sessionState, workerRuns } from "./state.ts";
import type { SessionState } from "./state.ts";
import { describeLeftRunning, describeStopLeft, stopSession } from "./stop.ts";

/** One session gc acted on (or would have), and why. */
export interface GcEntry {
  name: string;
  id: string;
  reason: string;
}

/** What a gc pass did, bucket by bucket. */
export interface GcReport {
  dryRun: boolean;
  orphans: GcEntry[];
  abandoned: GcEntry[];
  respawned: GcEntry[];
  flapping: GcEntry[];
  removed: GcEntry[];
  kept: GcEntry[];
  skipped: GcEntry[];
}

/** Three runs in a row that each ended this soon after they started mark a permanent session as flapping. */
const FLAP_EXITS = 3;
const FLAP_WINDOW_MS = 60_000;

/**
 * How many of the session's last runs in a row ended within FLAP_WINDOW_MS of their start
 * (each run's start and exit events, by generation). Measured on the runs themselves, so
 * it holds however seldom gc runs.
 */
export function fastExitsInARow(events: Array<{ at: string; kind: string; [key: string]: unknown }>): number {
  const started = new Map<unknown, number>();
  const lifetimes: number[] = [];
  for (const event of events) {
    if (event.kind === "start") started.set(event.generation, Date.parse(event.at));
    // A run that failed to start has no start event: it ended at once.
    if (event.kind === "exit") lifetimes.push(Date.parse(event.at) - (started.get(event.generation) ?? Date.parse(event.at)));
  }
  let count = 0;
  for (let i = lifetimes.length - 1; i >= 0 && lifetimes[i] < FLAP_WINDOW_MS; i--) count++;
  return count;
}

/** What a gc change (or `session kill`) is audited as: `session.<action>` (lib/store/effect-kinds.ts). */
export type GcAction = "kill" | "stop" | "start" | "remove-orphan" | "abandon" | "respawn" | "mark-flapping" | "remove";

/**
 * Runs one outward effect of gc (a stop, a removal, a respawn) between an audit intent and
 * its outcome (DESIGN rule 3); the command passes one that writes to the store.
 */
export type GcEffect = <T>(action: GcAction, record: SessionRecord, run: () => Promise<T>) => Promise<T>;

/** Runs one gc pass over the session root. */
export async function collectGarbage(root: string, options: { dryRun?: boolean; effect?: GcEffect } = {}): Promise<GcReport> {
  const dryRun = options.dryRun ?? false;
  const effect: GcEffect = options.effect ?? ((_action, _record, run) => run());
  const stopIt = (record: SessionRecord) => effect("stop", record, () => stopSession(root, record));
  const report: GcReport = { dryRun, orphans: [], abandoned: [], respawned: [], flapping: [], removed: [], kept: [], skipped: [] };
  const seen = listRecords(root).map((record) => ({ record, state: sessionState(root, record) }));
  for (const bad of unreadableRecords(root)) {
    report.skipped.push({ name: basename(bad.file), id: basename(bad.file, ".json"), reason: "its record cannot be read" });
  }
  const done = new Set<string>();
  const entry = (r: SessionRecord, reason: string): GcEntry => ({ name: r.name, id: r.id, reason });

  /**
   * Under the session's lock, re-reads it and runs `change` only if it is still the
   * generation this pass saw (and, unless this pass stopped it, still ended as seen).
   */
  const act = async (r: SessionRecord, bucket: GcEntry[], reason: string, change: (current: SessionRecord) => void, stopped = false) => {
    done.add(r.id);
    if (dryRun) {
      bucket.push(entry(r, reason));
      return false;
    }
    const acted = await effect(bucketAction(bucket, report), r, () => withLock(sessionFiles(root, r.id).lock, () => {
      const current = readRecord(root, r.id);
      // A session this pass stopped may have been reaped by its own holder (--ephemeral): that is done too.
      if (!current) return stopped;
      if (current.generation !== r.generation || (!stopped && current.exitedAt !== r.exitedAt)) return false;
      change(current);
      return true;
    }));
    (acted ? bucket : report.skipped).push(entry(r, acted ? reason : "changed since this pass read it"));
    return acted;
  };
  const removeFiles = (current: SessionRecord) => removeSessionFiles(root, current.id);

  /**
   * Whether a session's command must be stopped before it is acted on: true while it runs,
   * or while its holder is gone and its child may still run; "unknown" (reported as
   * skipped) when that cannot be told.
   */
  const mustStop = async (record: SessionRecord, state: SessionState): Promise<boolean | "unknown"> => {
    if (state === "running") return true;
    if (state !== "vanished") return false;
    const child = commandRuns(record);
    if (child === undefined) {
      done.add(record.id);
      report.skipped.push(entry(record, `holder gone and child pid ${record.childPid} cannot be checked`));
      return "unknown";
    }
    return child;
  };

  /**
   * Stops a session before it is acted on; false (reported as skipped) when its command
   * stopped but what it started runs on where nothing signals it: its files stay, for its
   * record is what says its directory is not free.
   */
  const stopped = async (record: SessionRecord): Promise<boolean> => {
    if (await stopIt(record) !== "left-running") return true;
    done.add(record.id);
    report.skipped.push(entry(record, describeStopLeft(readRecord(root, record.id) ?? record)));
    return false;
  };

  /** Whether an ended session's exit left what its command started running, or unread, and that is not proven over. */
  const leftBehind = (record: SessionRecord, state: SessionState): boolean => {
    if (state !== "exited" || !record.membersAtExit || workerRuns(root, record) === false) return false;
    done.add(record.id);
    report.skipped.push(entry(record, `its command ended, but ${describeLeftRunning(record)}`));
    return true;
  };

  const keptOrphans = new Set<string>();
  // 1. Orphans: a session whose parent session is gone is stopped and removed, unless it
  // is kept: keep governs what ends, so a kept orphan is only reported.
  for (const { record, state } of seen) {
    const parentRef = record.tags.parent;
    if (parentRef === undefined || state === "unknown") continue;
    const parent = seen.find((s) => s.record.name === parentRef || s.record.id === parentRef);
    if (parent && (parent.state === "running" || parent.state === "starting" || parent.state === "unknown")) continue;
    if (isKept(record)) {
      // Reported here; the later steps still apply (a kept permanent session is respawned).
      keptOrphans.add(record.id);
      report.kept.push(entry(record, `keep=${record.tags.keep}; an orphan: parent "${parentRef}" is gone`));
      continue;
    }
    if (leftBehind(record, state)) continue;
    const stop = await mustStop(record, state);
    if (stop === "unknown") continue;
    if (stop && !dryRun && !(await stopped(record))) continue;
    await act(record, report.orphans, `parent "${parentRef}" is gone`, removeFiles, stop && !dryRun);
  }

  // 2. Abandoned: a permanent session whose working directory is gone is stopped and recorded so.
  for (const { record, state } of seen) {
    if (done.has(record.id) || !record.permanent || record.ended === "abandoned" || existsSync(record.cwd) || state === "unknown") continue;
    if (leftBehind(record, state)) continue;
    const stop = await mustStop(record, state);
    if (stop === "unknown") continue;
    if (stop && !dryRun && !(await stopped(record))) continue;
    await act(record, report.abandoned, `working directory ${record.cwd} is gone`, (current) => {
      writeRecord(root, { ...current, ended: "abandoned", exitedAt: current.exitedAt ?? isoSeconds(now()) });
      appendSessionEvent(root, record.id, "abandoned", { cwd: record.cwd, generation: record.generation });
    }, stop && !dryRun);
  }

  // 3. Respawn: a permanent session that ended is started again, unless it flaps.
  for (const { record, state } of seen) {
    if (done.has(record.id) || !record.permanent || !ended(state) || record.ended === "abandoned" || record.tags.flapping === "true") continue;
    if (leftBehind(record, state)) continue;
    if (state === "vanished" && commandRuns(record) !== false) {
      done.add(record.id);
      report.skipped.push(entry(record, mayStillRun(record)));
      continue;
    }
    const recent = fastExitsInARow(readSessionEvents(root, record.id));
    if (recent >= FLAP_EXITS) {
      await act(record, report.flapping, `${recent} runs in a row ended within ${FLAP_WINDOW_MS / 1000}s of starting`, (current) => {
        writeRecord(root, { ...current, tags: { ...current.tags, flapping: "true" } });
        appendSessionEvent(root, record.id, "tag", { set: { flapping: "true" }, by: "gc" });
      });
      continue;
    }
    const respawn = respawnRecord(record);
    const claimed = await act(record, report.respawned, `generation ${respawn.generation}`, () => {
      writeRecord(root, respawn);
      noteRespawn(root, respawn);
    });
    if (!claimed) continue;
    try {
      await effect("start", respawn, () => startDetached(root, respawn.id));
    } catch (error) {
      // One session that cannot start again must not cost the rest of the pass; its holder
      // recorded the failed start, which counts towards flapping.
      report.respawned.pop();
      report.skipped.push(entry(record, `could not start again: ${(error as Error).message}`));
    }
  }

  // 4. Sweep: ended sessions that are neither permanent nor kept are removed.
  for (const { record, state } of seen) {
    if (done.has(record.id)) continue;
    if (state === "unknown") {
      report.skipped.push(entry(record, `holder pid ${record.holderPid} cannot be checked`));
      continue;
    }
    if (!ended(state)) continue;
    if (record.permanent) continue;
    if (isKept(record)) {
      if (!keptOrphans.has(record.id)) report.kept.push(entry(record, `keep=${record.tags.keep}`));
      continue;
    }
    if (state === "vanished" && commandRuns(record) !== false) {
      report.skipped.push(entry(record, mayStillRun(record)));
      continue;
    }
    if (leftBehind(record, state)) continue;
    await act(record, report.removed, state === "vanished" ? "vanished: its holder died without recording an exit" : describeEnd(record), removeFiles);
  }
  return report;
}

/** Why a vanished session is left alone: its child, or what the child started in its process group, may still run. */
function mayStillRun(record: SessionRecord): string {
  if (childRunning(record) !== false) return `holder gone but child pid ${record.childPid} may still run`;
  return `holder gone and child pid ${record.childPid} ended, but what it started in process group ${record.childPgid ?? record.sharedPgid} may still run`;
}

function ended(state: SessionState): boolean {
  return state === "exited" || state === "vanished";
}

function describeEnd(record: SessionRecord): string {
  if (record.ended === "killed") return "killed";
  if (record.ended === "crashed") return `crashed (${record.exitSignal})`;
  if (record.ended === "failed-to-start") return "failed to start";
  return `exited ${record.exitCode}`;
}

/** The audit action of a gc bucket's change. */
function bucketAction(bucket: GcEntry[], report: GcReport): GcAction {
  if (bucket === report.orphans) return "remove-orphan";
  if (bucket === report.abandoned) return "abandon";
  if (bucket === report.respawned) return "respawn";
  if (bucket === report.flapping) return "mark-flapping";
  return "remove";
}

const BUCKETS: Array<[keyof GcReport, string, string]> = [
  ["orphans", "removed orphan", "would remove orphan"],
  ["abandoned", "abandoned", "would mark abandoned"],
  ["respawned", "respawned", "would respawn"],
  ["flapping", "flapping, not respawned", "would mark flapping"],
  ["removed", "removed", "would remove"],
  ["kept", "kept", "kept"],
  ["skipped", "skipped", "skipped"],
];

/** The gc report as lines, one per session, bucket by bucket. */
export function describeGc(report: GcReport): string[] {
  const lines: string[] = [];
  for (const [bucket, done, would] of BUCKETS) {
    for (const entry of report[bucket] as Array<{ name: string; id: string; reason: string }>) {
      lines.push(`${report.dryRun ? would : done}: ${entry.name} ${entry.id.slice(0, 8)} (${entry.reason})`);
    }
  }
  const acted = (["orphans", "abandoned", "respawned", "flapping", "removed"] as const).some((b) => report[b].length);
  if (!acted) lines.push("Nothing to clean up");
  return lines;
}
