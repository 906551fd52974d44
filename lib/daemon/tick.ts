/**
 * One daemon tick, in the order DESIGN "One daemon tick" gives (the parts that exist):
 * settle or report effects a crash cut short (lib/daemon/unfinished.ts), drain the exit
 * spool, settle sessions and claims cut short, refresh pull requests, poll when due, retire
 * idle workers of done items (lib/ending/retire.ts), close finished items' tabs
 * (lib/ending/tabs.ts), advance this host's heartbeat and fence lost claims (lib/daemon/host-heartbeats.ts),
 * release finished items' claims on GitHub (lib/work-items/issue-claims.ts),
 * reclaim done items' disk (lib/cleanup/pass.ts), dispatch, tell
 * the owner (lib/notify/pass.ts), then a `reconcile.pass` audit record and the heartbeat. Reconcile always runs before dispatch:
 * when draining or settling failed, nothing is dispatched this tick. A failed step is
 * reported and the tick goes on to the next step; a stop asked for between steps ends
 * the tick after the step that was running.
 */
import { isoSeconds, now, parseTimestamp } from "../clock.ts";
import { dispatchReady } from "../dispatch/dispatch.ts";
import type { DispatchOutcome } from "../dispatch/dispatch.ts";
import type { DispatchDeps } from "../dispatch/dispatch-deps.ts";
import { closeFinishedTabs } from "../ending/tabs.ts";
import type { TabsDeps } from "../ending/tabs.ts";
import { pollRepositories } from "../intake/poll.ts";
import { refreshPullRequests } from "../intake/pull-requests.ts";
import { followPullRequests } from "../intake/review.ts";
import { gatherFeedback } from "../intake/feedback.ts";
import { refreshBlockers } from "../intake/dependencies.ts";
import { deliverFeedback } from "../dispatch/feedback-delivery.ts";
import { reportLines } from "../intake/report.ts";
import { redact } from "../redact.ts";
import { printable } from "../printable.ts";
import { appendAudit, lastAuditId, newLogCursor, queryAudit } from "../store/audit.ts";
import type { LogCursor } from "../store/audit.ts";
import { listItems } from "../work-items/queries.ts";
import { releaseClaims } from "../work-items/issue-claims.ts";
import { heartbeatPass } from "./host-heartbeats.ts";
import type { DaemonEvent, Report } from "../events.ts";
import { writeHeartbeat } from "./heartbeat.ts";
import type { ConfigInUse } from "./config-reload.ts";
import { drainSpool } from "./spool-drain.ts";
import { settleClaims } from "./settle-claims.ts";
import { settleSessions } from "./settle.ts";
import { sweepUnfinished } from "./unfinished.ts";
import { retireIdleWorkers } from "../ending/retire.ts";
import { reportSilentWorkers } from "../work-items/silent-workers.ts";
import { followNeedsInfo } from "../work-items/needs-info.ts";
import { cleanupPass, newBundleCursor } from "../cleanup/pass.ts";
import type { BundleCursor } from "../cleanup/pass.ts";
import { reportDiskAnomalies } from "../cleanup/disk-anomalies.ts";
import { newWorktreeListMemo } from "../boundaries/worktree-list-memo.ts";
import type { WorktreeListMemo } from "../boundaries/worktree-list-memo.ts";
import { notifyPass, openNotificationCursor } from "../notify/pass.ts";

/** What a tick works with: dispatch's dependencies, the exit spool, and where to report. */
export interface TickDeps extends DispatchDeps, Pick<TabsDeps, "terminalLauncher"> {
  spoolDir: string;
  report: Report;
  /** The config file the daemon runs and what of it is applied, written into the heartbeat for `doctor`. */
  configInUse?: ConfigInUse;
  /** Asked between steps; true ends the tick early. */
  stopRequested?: () => boolean;
}

/** What the daemon carries from tick to tick. */
export interface DaemonState {
  tick: number;
  lastPollAt: string | null;
  /** Spool files already reported as kept. */
  reportedSpool: Set<string>;
  /** Why each item waited when last reported: a wait is printed again only when its reason changes. */
  waiting: Map<number, string>;
  /**
   * How far each step that follows the audit log has read it, so a pass reads only what is new
   * since the last: the unfinished-effect sweep's intents, claim settling's launches, cleanup's
   * bundles. Held by this process only: a daemon that starts again reads the whole log once.
   */
  cursors: { unfinished: LogCursor; launches: LogCursor; bundles: BundleCursor };
  /** The clones' worktree lists as git last gave them, asked again once git's record of them changes (the disk anomalies). */
  worktreeLists: WorktreeListMemo;
}

/** What a tick did, as the `reconcile.pass` audit record counts it. */
export interface TickResult {
  tick: number;
  failed: string[];
  stopped: boolean;
  spool: { processed: number; kept: number };
  /**
   * `cut_short`: items left `dispatching` by a claimer proven gone, now interrupted, active with the worker their launch
   * started (adopted), or, no worker of them ever started, back in the queue (failed after three times in a row).
   */
  settled: { lost: number; ended: number; unknown: number; cut_short: number };
  /** Active items whose workers now wait for their owner (`needs_info`), and needs_info items whose workers are at work again. */
  needs_info: { asked: number; answered: number };
  /** The `worker_silent` anomalies raised (a worker's agent not reporting its start in time) and closed (it reported, or its session ended). */
  silent: { raised: number; retracted: number };
  /** Effects a crash cut short: given an outcome from evidence, newly reported as anomalies, waited for. */
  unfinished: { settled: number; reported: number; waiting: number };
  /** The pull requests of active and recently done items: requests sent (304s among them), rows written, repositories that failed, repositories left for a later pass while the rate limit is tight. */
  pulls: { repos: number; requests: number; not_modified: number; stored: number; failed: number; slowed: number };
  /**
   * Feedback from the owner and listed reviewers: pieces taken this pass, pieces by strangers left out, messages typed
   * into idle workers and the pieces they carried, and items whose feedback waits (their worker at work, ended, headless).
   */
  feedback: { taken: number; strangers: number; messages: number; delivered: number; held: number };
  poll: { ran: boolean; new: number; done: number; abandoned: number };
  /** Ready items whose blockers were asked, those still waiting on one, and those whose blockers closed this pass. */
  dependencies: { asked: number; blocked: number; released: number };
  /** Workers of done items retired, left running, and the `orphan_session` anomalies raised, retracted and gone. */
  retire: { retired: number; left: number; orphans: { raised: number; retracted: number; gone: number } };
  /** Finished items' tabs closed, and items whose tabs could not be told this pass. */
  tabs: { closed: number; unknown: number };
  /** This host's heartbeat advanced (repositories), claims found lost, repositories GitHub could not be asked about. */
  hosts: { beats: number; lost: number; failed: number };
  /** Done and abandoned items' claims on GitHub released (lib/work-items/issue-claims.ts), those found no longer this host's, and those GitHub would not release this pass. */
  claims: { released: number; not_ours: number; failed: number };
  /** Cleanup decisions by state (with `[cleanup] on_issue_close`), items not decided, old bundles removed. */
  cleanup: { done: number; branch_retained: number; retained: number; skipped: number; failed: number; bundles_removed: number };
  /** The `orphan_worktree` and `prunable_worktree` anomalies raised and retracted. */
  disk: { raised: number; retracted: number };
  /** `active`: dispatched and running; `would_dispatch`: what a level without sessions would have started. */
  dispatch: { withheld: string | null; would_dispatch: number; active: number; failed: number; waiting: number };
  /** Messages told to the owner (recorded only, below live), events folded into the summary, deliveries that failed. */
  notify: { sent: number; held_back: number; failed_deliveries: number };
}

/** A fresh daemon's state; `lastPollAt` from the last heartbeat, if any. */
export function initialState(lastPollAt: string | null = null): DaemonState {
  return {
    tick: 0, lastPollAt, reportedSpool: new Set(), waiting: new Map(),
    cursors: { unfinished: newLogCursor(), launches: newLogCursor(), bundles: newBundleCursor() },
    worktreeLists: newWorktreeListMemo(),
  };
}

/** Runs one tick; `nextAt` is when the next one is due (null for `--once`). */
export async function runTick(deps: TickDeps, state: DaemonState, nextAt: (at: Date) => Date | null = () => null): Promise<TickResult> {
  state.tick++;
  const passStartedAfter = lastAuditId(deps.store);
  // Before any step: what this tick does is told, by its own notification step or, if it is stopped first, the next tick's.
  openNotificationCursor(deps, passStartedAfter);
  const result: TickResult = {
    tick: state.tick, failed: [], stopped: false, spool: { processed: 0, kept: 0 }, settled: { lost: 0, ended: 0, unknown: 0, cut_short: 0 }, needs_info: { asked: 0, answered: 0 }, silent: { raised: 0, retracted: 0 },
    unfinished: { settled: 0, reported: 0, waiting: 0 }, pulls: { repos: 0, requests: 0, not_modified: 0, stored: 0, failed: 0, slowed: 0 },
    feedback: { taken: 0, strangers: 0, messages: 0, delivered: 0, held: 0 },
    poll: { ran: false, new: 0, done: 0, abandoned: 0 }, dependencies: { asked: 0, blocked: 0, released: 0 }, retire: { retired: 0, left: 0, orphans: { raised: 0, retracted: 0, gone: 0 } },
    tabs: { closed: 0, unknown: 0 }, hosts: { beats: 0, lost: 0, failed: 0 }, claims: { released: 0, not_ours: 0, failed: 0 }, cleanup: { done: 0, branch_retained: 0, retained: 0, skipped: 0, failed: 0, bundles_removed: 0 },
    disk: { raised: 0, retracted: 0 }, dispatch: { withheld: null, would_dispatch: 0, active: 0, failed: 0, waiting: 0 },
    notify: { sent: 0, held_back: 0, failed_deliveries: 0 },
  };
  const step = async (name: string, fn: () => void | Promise<void>): Promise<boolean> => {
    if (deps.stopRequested?.()) {
      result.stopped = true;
      return false;
    }
    try {
      await fn();
      return true;
    } catch (error) {
      result.failed.push(name);
      deps.report({ event: "step_failed", line: `${name} failed: ${redact(error instanceof Error ? error.message : String(error))}`, step: name });
      return false;
    }
  };
  // First, before any step can act again on what a crash cut short (the drain would set a damaged file aside
  // anew, and the move would be taken for the crashed one's): each effect cut short is settled from evidence
  // or reported, never retried. A failure here holds no dispatch back.
  await step("unfinished effects", async () => {
    const sweep = await sweepUnfinished(deps, state.cursors.unfinished);
    result.unfinished = { settled: sweep.settled, reported: sweep.reported, waiting: sweep.waiting };
    sweep.events.forEach(deps.report);
  });
  let damagedSessions: string[] = [];
  const drained = await step("exit spool", async () => {
    const drain = await drainSpool(deps.store, deps.spoolDir, state.reportedSpool, deps.sessionRoot);
    damagedSessions = drain.damagedSessions;
    result.spool = { processed: drain.processed, kept: drain.kept };
    drain.events.forEach(deps.report);
  });
  const settled = await step("settle", async () => {
    const settle = settleSessions({ store: deps.store, sessionRoot: deps.sessionRoot, spoolDir: deps.spoolDir, host: deps.host, damagedSessions });
    result.settled = { ...result.settled, lost: settle.lost, ended: settle.ended, unknown: settle.unknown };
    settle.events.forEach(deps.report);
    // After the unfinished-effect sweep (the first step), so a launch a crash cut short has its outcome from evidence
    // before a claim's worker is adopted on it; a claim whose launch is not settled yet waits, counted unknown.
    const claims = await settleClaims(deps, state.cursors.launches);
    result.settled = { ...result.settled, unknown: settle.unknown + claims.unknown + claims.waiting, cut_short: claims.cutShort + claims.requeued + claims.failed };
    claims.events.forEach(deps.report);
  });
  await step("needs info", async () => {
    const followed = await followNeedsInfo({ store: deps.store, config: deps.config, host: deps.host });
    result.needs_info = { asked: followed.asked, answered: followed.answered };
    followed.events.forEach(deps.report);
  });
  // A worker whose agent never reported starting (Claude Code at its folder-trust question, a login) is the owner's to look at.
  await step("silent workers", async () => {
    const silent = await reportSilentWorkers({ store: deps.store, config: deps.config, host: deps.host, sessionRoot: deps.sessionRoot });
    result.silent = { raised: silent.raised, retracted: silent.retracted };
    silent.events.forEach(deps.report);
  });
  await step("pull requests", () => pullRequests(deps, result));
  // After the pull requests and their feedback are read, so what came this pass is given this pass.
  if (deps.effects.sessions) {
    await step("feedback", async () => {
      const given = await deliverFeedback(deps);
      result.feedback = { ...result.feedback, messages: given.messages, delivered: given.pieces, held: given.held };
      given.events.forEach(deps.report);
    });
  }
  if (pollDue(state, deps.config.daemon.poll_seconds)) await step("poll", () => poll(deps, state, result));
  // Before dispatch, so a slot a retirement frees is taken on the same pass. Pauses and holds do not reach it.
  await step("retire", async () => {
    const retired = await retireIdleWorkers({ store: deps.store, sessionRoot: deps.sessionRoot, config: deps.config, effects: deps.effects, host: deps.host });
    result.retire = { retired: retired.retired, left: retired.left, orphans: retired.orphans };
    retired.events.forEach(deps.report);
  });
  // After retirement, so a retired worker's tab goes on the same pass.
  await step("tabs", async () => {
    const sweep = await closeFinishedTabs(deps);
    result.tabs = { closed: sweep.closed, unknown: sweep.unknown };
    sweep.events.forEach(deps.report);
  });
  // This host's heartbeat and the others', and this host's claims as GitHub lists them (lost ones fenced), before the
  // release of finished items' claims and dispatch, which read what it found.
  await step("hosts", async () => {
    result.hosts = await heartbeatPass(deps);
  });
  // Finished items' claims on GitHub, so another host may take up their issues if they are opened again.
  await step("claims", async () => {
    for (const released of await releaseClaims(deps)) {
      if (released.result === "failed") {
        result.claims.failed++;
        deps.report({ event: "claim_release_failed", line: `claim of ${released.repo}#${released.issue} (item ${released.item}) could not be released (${released.why}); tried again next pass`, item: released.item });
        continue;
      }
      if (released.result === "not ours") result.claims.not_ours++;
      else result.claims.released++;
      const how = released.result === "not ours" ? "was no longer this host's on GitHub, and was left as it stands" : released.result === "gone" ? "was already gone from GitHub" : "released on GitHub";
      deps.report({ event: "claim_released", line: `claim of ${released.repo}#${released.issue} (item ${released.item}) ${how}`, item: released.item, result: released.result });
    }
  });
  // After retirement, so the disk of an item whose worker was just retired is reclaimed on the same pass.
  await step("cleanup", async () => {
    const pass = await cleanupPass(deps, { bundles: state.cursors.bundles });
    result.cleanup = { ...pass.decided, failed: pass.failed, bundles_removed: pass.bundles_removed };
    pass.events.forEach(deps.report);
  });
  // After cleanup, so a directory it just reclaimed is not reported, and one it left is.
  await step("disk anomalies", async () => {
    const disk = await reportDiskAnomalies({ ...deps, worktreeLists: state.worktreeLists });
    result.disk = { raised: disk.raised, retracted: disk.retracted };
    disk.events.forEach(deps.report);
  });
  // Right before dispatch, so an item whose blockers closed goes on this pass, and one a new blocker holds does not.
  await step("dependencies", async () => {
    const refreshed = await refreshBlockers(deps, { includeSimulated: deps.effects.simulated });
    result.dependencies = { asked: refreshed.asked, blocked: refreshed.blocked, released: refreshed.released };
    refreshed.events.forEach(deps.report);
    if (refreshed.failed.length) throw new Error(refreshed.failed.join("; "));
  });
  if (!result.stopped) {
    if (drained && settled) await step("dispatch", () => dispatch(deps, result, state));
    else {
      result.dispatch.withheld = "the exit spool or the sessions could not be reconciled";
      result.dispatch.waiting = readyLeft(deps);
      deps.report({ event: "dispatch_withheld", line: `dispatch withheld: ${result.dispatch.withheld}`, reason: result.dispatch.withheld });
    }
  }
  // Last before the heartbeat, so what this pass did is told on this pass.
  if (!result.stopped) {
    await step("notifications", async () => {
      const told = await notifyPass(deps, { passStartedAfter });
      result.notify = { sent: told.sent, held_back: told.held_back, failed_deliveries: told.failed_deliveries };
      told.events.forEach(deps.report);
    });
  }
  if (result.stopped) return result;
  await step("heartbeat", () => {
    const at = now();
    appendAudit(deps.store, { kind: "reconcile.pass", simulated: deps.effects.simulated, body: { ...result, stopped: undefined } });
    const next = nextAt(at);
    writeHeartbeat(deps.stateDir, {
      pid: process.pid, at: isoSeconds(at), tick: state.tick, next_at: next ? isoSeconds(next) : null, last_poll_at: state.lastPollAt,
      ...(deps.configInUse ? { config: deps.configInUse } : {}),
    });
  });
  return result;
}

/**
 * What a tick did, in one line (and one `tick` event): how many items it dispatched, saw
 * fail, left waiting (every ready item it left, whatever holds it), and which steps failed. A failed dispatch is an item's outcome (the
 * item is `failed`, its issue told), counted in `failed`; a failed step is one the tick
 * could not do (it threw), named in `steps_failed`. Workers retired are named when there
 * were any.
 * @example tickSummary(result).line // "tick 1: dispatched 1, failed 1, waiting 2; no step failed"
 */
export function tickSummary(result: TickResult): DaemonEvent {
  const d = result.dispatch;
  const counts = [
    `dispatched ${d.active}`,
    ...(d.would_dispatch ? [`would dispatch ${d.would_dispatch}`] : []),
    ...(result.retire.retired ? [`retired ${result.retire.retired}`] : []),
    `failed ${d.failed}`,
    `waiting ${d.waiting}${d.withheld ? " (dispatch withheld)" : ""}`,
  ].join(", ");
  const steps = result.failed.length === 0 ? "no step failed" : `step${result.failed.length === 1 ? "" : "s"} failed: ${result.failed.join(", ")}`;
  return {
    event: "tick",
    line: `tick ${result.tick}${result.stopped ? " (stopped early)" : ""}: ${counts}; ${steps}`,
    tick: result.tick, dispatched: d.active, would_dispatch: d.would_dispatch, retired: result.retire.retired, failed: d.failed, waiting: d.waiting,
    withheld: d.withheld, steps_failed: result.failed, stopped: result.stopped,
  };
}

/** Whether `poll_seconds` have passed since the last poll (always, when there was none). */
export function pollDue(state: DaemonState, pollSeconds: number): boolean {
  const last = parseTimestamp(state.lastPollAt);
  return last === undefined || now().getTime() - last.getTime() >= pollSeconds * 1000;
}

async function poll(deps: TickDeps, state: DaemonState, result: TickResult): Promise<void> {
  const { config } = deps;
  if (!config.github.author) throw new Error("no github.author is configured, so intake takes nothing");
  const rules = { author: config.github.author, label: config.github.label };
  const paths = Object.fromEntries(Object.entries(config.repos).map(([name, repo]) => [name, repo.path]));
  const polls = await pollRepositories({ store: deps.store, reader: deps.github, effects: deps.effects, rules, host: deps.host, paths }, Object.keys(config.repos));
  state.lastPollAt = isoSeconds(now());
  result.poll = { ran: true, new: sum(polls, "new"), done: sum(polls, "done"), abandoned: sum(polls, "abandoned") };
  const ready = listItems(deps.store, { states: ["ready"], includeSimulated: deps.effects.simulated }).length;
  const lines = reportLines(polls, { ready, simulated: 0, include_simulated: deps.effects.simulated }, deps.effects.simulated, deps.effects.level);
  for (const line of lines) deps.report({ event: "poll", line: `poll: ${line.trim()}` });
  if (polls.some((p) => p.error !== null)) throw new Error(polls.filter((p) => p.error).map((p) => `${p.repo}: ${p.error}`).join("; "));
}

/**
 * Refreshes the items' pull requests; one line says what changed, if anything did, then the
 * items whose worker exited 0 follow theirs (one line each that moved); a repository that
 * failed fails the step.
 */
async function pullRequests(deps: TickDeps, result: TickResult): Promise<void> {
  const refresh = await refreshPullRequests(deps);
  result.pulls = { repos: refresh.repos, requests: refresh.requests, not_modified: refresh.notModified, stored: refresh.stored, failed: refresh.failed.length, slowed: refresh.slowed };
  if (refresh.events.length) {
    // A first refresh may find hundreds: the line names a few, the event carries them all.
    const named = refresh.events.slice(0, 10).map((e) => `${e.repo}#${e.number} ${e.change} (item ${e.item})`);
    const more = refresh.events.length - named.length;
    deps.report({ event: "pull_requests", line: `pull requests: ${named.join(", ")}${more ? ` and ${more} more` : ""}`, changes: refresh.events });
  }
  // What the owner and the reviewers they trust said, for the repositories just asked; what it takes is given by the feedback step.
  const gathered = await gatherFeedback(deps, refresh.asked);
  result.feedback = { ...result.feedback, taken: gathered.taken.length, strangers: gathered.strangers };
  if (gathered.taken.length || gathered.strangers || gathered.edited) {
    // Outside text (a login, a path, a check's name) is escaped for the terminal.
    const named = gathered.taken.slice(0, 10).map((f) => `item ${f.item}: @${printable(f.author)} ${printable(f.what)}${f.delivered_how === "not delivered" ? " (the item is finished: shown, not given)" : ""}`);
    const more = gathered.taken.length - named.length;
    const apart = [
      ...(gathered.strangers ? [`${gathered.strangers} by someone neither the owner nor a listed reviewer, left out`] : []),
      ...(gathered.edited ? [`${gathered.edited} edited after ${gathered.edited === 1 ? "it was" : "they were"} written, left out (who edited a comment cannot be told)`] : []),
    ];
    deps.report({
      event: "feedback", line: `feedback: ${[...(named.length ? [`${named.join(", ")}${more ? ` and ${more} more` : ""}`] : []), ...apart].join("; ")}`,
      taken: gathered.taken.map((f) => f.id), strangers: gathered.strangers, edited: gathered.edited,
    });
  }
  // Followed even when a repository failed: what the store holds of the others is known.
  for (const move of followPullRequests(deps.store)) {
    deps.report({ event: "review", line: `item ${move.item} is ${move.to}: ${move.reason}`, ...move });
  }
  const failed = [...refresh.failed, ...gathered.failed.map((f) => `feedback of ${f}`)];
  if (failed.length) throw new Error(failed.join("; "));
}

async function dispatch(deps: TickDeps, result: TickResult, state: DaemonState): Promise<void> {
  const since = lastAuditId(deps.store);
  const { withheld, outcomes } = await dispatchReady(deps);
  for (const outcome of outcomes) {
    const unchangedWait = outcome.result === "waiting" && state.waiting.get(outcome.item) === outcome.reason;
    if (outcome.result === "waiting") state.waiting.set(outcome.item, outcome.reason ?? "");
    else state.waiting.delete(outcome.item);
    if (!unchangedWait) deps.report(outcomeEvent(outcome));
    if (outcome.result === "active") result.dispatch.active++;
    else if (outcome.result === "failed") result.dispatch.failed++;
    else if (outcome.result === "would dispatch") result.dispatch.would_dispatch++;
  }
  result.dispatch.waiting = readyLeft(deps);
  reportComments(deps, since);
  if (withheld) {
    result.dispatch.withheld = withheld;
    deps.report({ event: "dispatch_withheld", line: `dispatch withheld: ${withheld}`, reason: withheld });
  }
}

/**
 * The ready items this tick leaves waiting, whatever holds them: the caps, a hold, the pause,
 * an untrusted repository, or a dispatch withheld. Counted from the items themselves, so a
 * withheld dispatch (which looks at no item) still says how many wait.
 */
function readyLeft(deps: TickDeps): number {
  return listItems(deps.store, { states: ["ready"], includeSimulated: deps.effects.simulated })
    .filter((item) => item.simulated === deps.effects.simulated).length;
}

function outcomeEvent(o: DispatchOutcome) {
  const at = `${o.repo}#${o.issue}`;
  const data = { item: o.item, repo: o.repo, issue: o.issue, reason: o.reason, session: o.session };
  switch (o.result) {
    case "active":
      return { event: "dispatched", line: `dispatched ${at} as ${o.session!.name} (item ${o.item})`, ...data };
    case "failed":
      return { event: "dispatch_failed", line: `could not dispatch ${at} (item ${o.item}): ${o.reason}: item failed`, ...data };
    case "waiting":
      return { event: "waiting", line: `waiting: ${at}: ${o.reason}`, ...data };
    default:
      return { event: "would_dispatch", line: `would dispatch ${at} (item ${o.item})`, ...data };
  }
}

/** The issue comments dispatch wrote (their audit outcomes since `afterId`), one line each. */
function reportComments(deps: TickDeps, afterId: number): void {
  const records = queryAudit(deps.store, { kind: "github.comment", afterId });
  const intents = new Map(records.filter((r) => r.phase === "intent").map((r) => [r.actionId, r]));
  for (const outcome of records.filter((r) => r.phase === "outcome")) {
    const intent = intents.get(outcome.actionId);
    if (!intent) continue;
    const at = `${intent.repo}#${intent.body.issue}`;
    const data = { item: intent.item, repo: intent.repo, issue: intent.body.issue, purpose: intent.body.purpose };
    if (outcome.body.ok !== true) deps.report({ event: "comment_failed", line: `could not comment on ${at}: ${outcome.body.error}`, ...data });
    else if (intent.simulated) deps.report({ event: "comment", line: `would comment on ${at} (${intent.body.purpose})`, simulated: true, ...data });
    else deps.report({ event: "comment", line: `commented on ${at} (${intent.body.purpose})`, url: outcome.body.url ?? null, ...data });
  }
}

function sum<K extends "new" | "done" | "abandoned">(polls: Array<Record<K, number>>, key: K): number {
  return polls.reduce((n, p) => n + p[key], 0);
}
