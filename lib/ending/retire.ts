/**
 * Retirement, and the `orphan_session` anomalies it raises and resolves: the tick step
 * that gives the lifecycle its ending (the owner's guide, "The session's ending").
 *
 * An item that is `done` and whose worker is idle has that worker stopped, its session row
 * closed `retired` and its slot returned. Two signals authorise it: a merged pull request
 * (on the first pass that observes the worker idle, with no floor), or, with none, the
 * worker idle for `QUIET_PERIOD_SECONDS`. Idleness is the registry's word and nothing else
 * (lib/work-items/idleness.ts); busy or unknown is never retired, however long ago anything
 * merged (DESIGN rule 1). `failed` and `abandoned` items keep their workers; pauses and
 * holds govern what starts, not what ends. A keep covers the item's current session.
 *
 * Stopping is `stopSession` (pid plus start time, the holder's own group only, SIGTERM
 * then SIGKILL) between a `session.retire` intent and outcome carrying `signal` and
 * `idle_s`. A process that survives settles nothing: the row stays open, the slot held,
 * and `orphan_session` is raised. The transcript, worktree, branch and item are not touched.
 * The worker's episode ends with it: an agent that runs its SessionEnd hook as it stops
 * (Claude Code) ends it itself; one that does not (Codex, stopped by a signal) has it ended
 * by the retirement once its process is proven stopped, its record written as the hook's
 * would be (outcome `retired`), so cleanup finds the worktree as it finds any other.
 *
 * `orphan_session` (a live worker under a done item that is not kept; a retirement that
 * could not stop its process) is raised once per session, retracted when the item is kept
 * or the worker retired, and resolved `gone` when the worker ended otherwise.
 */
import { isoSeconds, now } from "../clock.ts";
import type { Config, WorkerProfile } from "../config.ts";
import type { DaemonEvent } from "../events.ts";
import type { Effects } from "../effects.ts";
import { openJournal } from "../episodes/journal.ts";
import { endEpisode } from "../episodes/lifecycle.ts";
import { findOpen } from "../episodes/open-episodes.ts";
import { mergedPullRequest } from "../intake/pull-requests.ts";
import { isKept, readRecord } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import { stopSession } from "../sessions/stop.ts";
import { listAnomalies, openAnomalyFor, raiseAnomaly, resolveAnomaly, retractAnomaly } from "../store/anomalies.ts";
import { auditEffect } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { endSession, openSessions, sessionById } from "../work-items/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import { workerIdleness } from "../work-items/idleness.ts";
import type { Idleness } from "../work-items/idleness.ts";
import { keptSession } from "./keeps.ts";

/** How long a worker of a done item with no merged pull request must have been idle before it is retired. */
export const QUIET_PERIOD_SECONDS = 30 * 60;

/** What retirement works with. */
export interface RetireDeps {
  store: Store;
  sessionRoot: string;
  config: Pick<Config, "worker">;
  effects: Pick<Effects, "sessions" | "simulated">;
  /** This machine: rows of another host cannot be checked or stopped from here. */
  host: string;
  /** How long a stop waits after SIGTERM before SIGKILL (default: stopSession's). */
  graceMs?: number;
}

/** What one retirement pass did. */
export interface RetireResult {
  retired: number;
  /** Workers of done items left running: busy, unknown, kept, waiting for the quiet period, or not stoppable. */
  left: number;
  /** `orphan_session` anomalies raised, retracted, and resolved as gone on this pass. */
  orphans: { raised: number; retracted: number; gone: number };
  events: DaemonEvent[];
}

/** Why a worker is retired, as the `session.retire` record's `signal` says. */
export type RetireSignal = "merged_pull_request" | "quiet_period";

/** Retires the idle workers of done items and raises, retracts and resolves `orphan_session`. */
export async function retireIdleWorkers(deps: RetireDeps): Promise<RetireResult> {
  const result: RetireResult = { retired: 0, left: 0, orphans: { raised: 0, retracted: 0, gone: 0 }, events: [] };
  for (const row of openSessions(deps.store, { state: "done" })) {
    if (row.host !== deps.host) continue;
    const item = getItem(deps.store, row.item)!;
    await considerWorker(deps, item, row, result);
  }
  settleOrphans(deps, result);
  return result;
}

/**
 * Whether a worker of a done item is retired now, and by which signal; null while it is
 * not (with why, for the orphan anomaly when it is not idle).
 * @example retireSignal({ idle: true, since, seconds: 47 }, true) // "merged_pull_request"
 */
export function retireSignal(idleness: Idleness, merged: boolean): RetireSignal | null {
  if (!idleness.idle) return null;
  if (merged) return "merged_pull_request";
  return idleness.seconds >= QUIET_PERIOD_SECONDS ? "quiet_period" : null;
}

async function considerWorker(deps: RetireDeps, item: WorkItem, row: StoredSession, result: RetireResult): Promise<void> {
  const { store } = deps;
  const at = `${item.repo}#${item.issue}`;
  const record = readRecord(deps.sessionRoot, row.id);
  // Kept by the owner: the item's keep covering this session, or the managed session's own keep tag.
  if (keptSession(store, item.id)?.id === row.id || (record !== undefined && isKept(record))) {
    // A kept done session is not an orphan: one raised before the keep was placed is retracted.
    result.left++;
    if (retractOrphan(store, row.id)) {
      result.orphans.retracted++;
      result.events.push({ event: "orphan_retracted", line: `orphan_session of item ${item.id} (${at}) retracted: ${row.name} is kept`, item: item.id, session: row.id });
    }
    return;
  }
  const idleness = await workerIdleness(row, profileOf(deps, row), now());
  const pull = mergedPullRequest(store, item.id);
  const signal = retireSignal(idleness, pull !== undefined);
  if (signal === null) {
    result.left++;
    // Idle and waiting out the quiet period is the rule working, not an orphan; busy or unknown is.
    if (!idleness.idle) raiseOrphan(deps, item, row, `its worker ${row.name} still runs under a done item and is not kept: ${idleness.why}`, result);
    return;
  }
  if (!deps.effects.sessions) {
    result.left++;
    result.events.push({ event: "would_retire", line: `would retire ${row.name} of item ${item.id} (${at}): ${describeSignal(signal, idleness, pull?.number)}`, item: item.id, session: row.id, signal, simulated: true });
    return;
  }
  // No record to stop it by, or its exit already on record (what it left may still run): the drain and settle own it.
  if (!record || sessionState(deps.sessionRoot, record) === "exited") {
    result.left++;
    return;
  }
  const idleSeconds = idleness.idle ? idleness.seconds : null;
  let outcome: RetireOutcome;
  try {
    outcome = await auditEffect(
      store,
      {
        kind: "session.retire", repo: item.repo, item: item.id, sessionId: row.id,
        body: { session: row.name, signal, idle_s: idleSeconds, pull_request: pull?.number ?? null },
      },
      () => retire(deps, row, record),
      (done) => ({ result: done.result, ...(done.why ? { why: done.why } : {}) }),
    );
  } catch (error) {
    outcome = { result: "failed", why: error instanceof Error ? error.message : String(error) };
  }
  if (outcome.result === "retired") {
    result.retired++;
    result.events.push({
      event: "retired", line: `retired ${row.name} of item ${item.id} (${at}): ${describeSignal(signal, idleness, pull?.number)}`,
      item: item.id, session: row.id, signal, idle_s: idleSeconds,
    });
    if (retractOrphan(store, row.id)) result.orphans.retracted++;
    return;
  }
  result.left++;
  if (outcome.result === "not idle" || outcome.result === "kept" || outcome.result === "ended by itself") return;
  raiseOrphan(deps, item, row, `retiring its worker ${row.name} could not stop its process: ${outcome.why}`, result);
}

/**
 * What a retirement did: retired (the row closed), found the worker busy again or kept since,
 * found it ended by itself (its row is the drain's to close, with how it ended), or could not stop it.
 */
type RetireOutcome = { result: "retired" | "not idle" | "kept" | "ended by itself" | "left-running" | "failed"; why?: string };

/** Stops one worker (asking its registry once more first) and closes its row `retired` once it is proven stopped. */
async function retire(deps: RetireDeps, row: StoredSession, record: NonNullable<ReturnType<typeof readRecord>>): Promise<RetireOutcome> {
  // The registry again, right before the signal: a worker that took up work since is left alone.
  const again = await workerIdleness(row, profileOf(deps, row), now());
  if (!again.idle) return { result: "not idle", why: again.why };
  // And the keep: one placed since the pass began is honoured.
  if (keptSession(deps.store, row.item)?.id === row.id) return { result: "kept" };
  const stopped = await stopSession(deps.sessionRoot, record, deps.graceMs === undefined ? {} : { graceMs: deps.graceMs });
  if (stopped === "left-running") return { result: "left-running", why: "processes it started still run (or cannot be checked)" };
  // It ended by itself meanwhile: that is not a retirement, and its own exit says how it ended.
  if (stopped === "not-running") return { result: "ended by itself" };
  // Proven stopped (or found ended): the row closes as retired, with the exit its holder recorded.
  const exited = readRecord(deps.sessionRoot, record.id);
  endSession(deps.store, row.id, "retired", { code: exited?.exitCode ?? null, at: exited?.exitedAt ?? isoSeconds(now()) });
  await endLeftEpisode(row);
  return { result: "retired" };
}

/**
 * Ends the retired worker's episode when its agent left it open (no SessionEnd hook ran): its
 * process is proven stopped, so the episode is over. A journal that cannot be read, or an
 * episode ended meanwhile, is left as it is: `recover episodes` closes what is stranded.
 */
async function endLeftEpisode(row: StoredSession): Promise<void> {
  try {
    const journal = await openJournal(row.worktree);
    if (!(await findOpen(journal, row.episode_key))?.episode) return;
    await endEpisode(journal, { key: row.episode_key, outcome: "retired", now: now() });
  } catch {
    // The row is closed either way; what the journal holds is the journal's.
  }
}

/** The profile the worker was started with, as its row records it; the config's for rows from before it was recorded. */
function profileOf(deps: RetireDeps, row: StoredSession): WorkerProfile {
  return row.profile ?? deps.config.worker.profile;
}

function describeSignal(signal: RetireSignal, idleness: Idleness, pull: number | undefined): string {
  const idle = idleness.idle ? `idle ${idleness.seconds} s` : "idle";
  return signal === "merged_pull_request" ? `pull request #${pull} merged, worker ${idle}` : `no merged pull request, worker ${idle} (quiet period ${QUIET_PERIOD_SECONDS / 60} min)`;
}

function raiseOrphan(deps: RetireDeps, item: WorkItem, row: StoredSession, why: string, result: RetireResult): void {
  const detail = `item ${item.id} (${item.repo}#${item.issue}) is done but ${why}; "robot-army keep ${item.id}" keeps it, "robot-army session kill ${row.name}" ends it`;
  const { raised } = raiseAnomaly(deps.store, { kind: "orphan_session", actionId: row.id, repo: item.repo, item: item.id, detail });
  if (!raised) return;
  result.orphans.raised++;
  result.events.push({ event: "orphan_session", line: `orphan_session: ${detail}`, item: item.id, session: row.id });
}

/** Retracts the open `orphan_session` of a session; true when there was one. */
function retractOrphan(store: Store, sessionId: string): boolean {
  const open = openAnomalyFor(store, "orphan_session", sessionId);
  if (!open) return false;
  retractAnomaly(store, open.id);
  return true;
}

/**
 * The open `orphan_session` anomalies whose session row has closed since: retracted when it
 * was retired, resolved `gone` when its worker ended otherwise.
 */
function settleOrphans(deps: RetireDeps, result: RetireResult): void {
  // Acknowledged or not: an acknowledged anomaly still resolves when its condition does.
  for (const anomaly of listAnomalies(deps.store, { unresolved: true, kind: "orphan_session" })) {
    if (anomaly.action_id === null) continue;
    const row = sessionById(deps.store, anomaly.action_id);
    if (!row || row.ended_at === null) continue;
    if (row.end_reason === "retired") {
      retractAnomaly(deps.store, anomaly.id);
      result.orphans.retracted++;
    } else {
      resolveAnomaly(deps.store, anomaly.id, "gone");
      result.orphans.gone++;
      result.events.push({ event: "orphan_gone", line: `orphan_session of item ${anomaly.item} resolved: its worker ${row.name} is gone (${row.end_reason})`, item: anomaly.item, session: row.id });
    }
  }
}
