/**
 * `resume` and `restart`: a new session for an item in the worktree and on the branch it
 * already has. `resume` starts the worker with `worker.resume_args` so its context is
 * restored (and gives it no new prompt: the context holds it); `restart` starts it fresh
 * with the prompt. Both obey the pause, holds and caps unless forced, and refuse while a
 * live session (or one that cannot be checked) works for the item or in its worktree.
 *
 * The new session's name is `ra-<repo>-<issue>-<attempt>` (the first attempt keeps the
 * dispatch name `ra-<repo>-<issue>`): launchers refuse a name on record, and removing the
 * old session's record would destroy its exit record and output log, the evidence of how
 * it ended, before anything has read them. A name already taken (a rebuilt database
 * counts attempts from one again) moves on to the next free number.
 */
import { join } from "node:path";
import { existingWorktree, worktreePath } from "../../boundaries/worktrees.ts";
import { isoSeconds, now } from "../../clock.ts";
import { PreconditionError } from "../../errors.ts";
import { closeFromExit, exitOfRecord } from "../../daemon/spool-drain.ts";
import { listRecords, readRecord } from "../../sessions/records.ts";
import { sessionState } from "../../sessions/state.ts";
import { getItem } from "../../work-items/queries.ts";
import type { WorkItem, WorkItemState } from "../../work-items/queries.ts";
import { transition } from "../../work-items/transition.ts";
import { branchName } from "../branch-name.ts";
import { claimDetails } from "../claim.ts";
import { findWorkerProgram } from "../worker-program.ts";
import { observeCapacity } from "../capacity.ts";
import { relaunchComment, failureComment } from "../comments.ts";
import type { Relaunch } from "../comments.ts";
import { describePause, describeWait, findHold, pauseState } from "../controls.ts";
import { sessionName, tell, workerProcess, workerSpec } from "../dispatch.ts";
import type { DispatchDeps } from "../dispatch.ts";
import { composePrompt, writePromptFile } from "../prompt.ts";
import { recordSession, sessionsOf } from "../sessions.ts";
import { worktreeRoot } from "../worktree-root.ts";
import { describeLive, liveSessionOf } from "./live-session.ts";
import { requireItem } from "../../work-items/argument.ts";

/** States a new session may be given from; `active` and `awaiting_review` only once no session runs. */
export const RELAUNCHABLE: readonly WorkItemState[] = ["interrupted", "failed", "needs_info", "active", "awaiting_review"];

/** What `resume` / `restart` did. */
export interface RelaunchOutcome {
  item: number;
  how: Relaunch;
  result: "active" | "failed";
  attempt: number;
  /** The session it continues or supersedes; null when none is on record. */
  earlier: string | null;
  session: { name: string; id: string; branch: string; worktree: string } | null;
  /** Why it failed (private: never in a public comment). */
  reason: string | null;
}

/** Gives an item a new session in its existing worktree; refusals throw PreconditionError before anything changes. */
export async function relaunchItem(deps: DispatchDeps, itemId: number, options: { how: Relaunch; force?: boolean }): Promise<RelaunchOutcome> {
  const { store, config } = deps;
  const item = requireItem(store, itemId);
  if (!RELAUNCHABLE.includes(item.state)) {
    throw new PreconditionError(`Work item ${itemId} is ${item.state}; ${options.how} needs it ${RELAUNCHABLE.join(", ")}`);
  }
  if (!deps.effects.worktrees || !deps.effects.sessions) {
    throw new PreconditionError(`${options.how} starts a real session: it needs effect level no-remote or live, not ${deps.effects.level}`);
  }
  const program = await findWorkerProgram(config);
  if ("missing" in program) throw new PreconditionError(`Work item ${itemId}: ${program.missing}; nothing was started`);
  const earlierRows = sessionsOf(store, item.id);
  const earlier = earlierRows.at(-1) ?? null;
  const repo = config.repos[item.repo];
  if (!repo) throw new PreconditionError(`Repository "${item.repo}" of work item ${itemId} is not in the config`);
  const path = earlier?.worktree ?? worktreePath(worktreeRoot(config, deps.stateDir), item.repo, item.issue);
  const branch = earlier?.branch ?? branchName(item.issue, item.title);
  const worktree = await existingWorktree({ repoPath: repo.path, path, branch });
  if (!worktree) throw new PreconditionError(`Work item ${itemId} has no worktree at "${path}" on branch "${branch}"; "robot-army retry ${itemId}" dispatches it afresh`);
  const live = liveSessionOf(store, deps.sessionRoot, item.id, worktree.path);
  if (live.live !== false) throw new PreconditionError(describeLive(live, item.id));
  if (!options.force) refuseWhenWithheld(deps, item);

  // No session of the item runs, so each row still open ended: close it from its own exit record now.
  closeEndedRows(deps, earlierRows);
  toDispatching(deps, getItem(store, item.id)!, options.how);
  // After a rebuilt database the names on disk run ahead of the rows: the attempt follows the name.
  const { name, attempt } = freeName(deps.sessionRoot, item, earlierRows.length + 1);
  const resume = options.how === "resume";
  try {
    const promptFile = resume ? undefined : writePromptFile(join(deps.stateDir, "prompts", `item-${item.id}`), composePrompt({
      item: item.id, repo: item.repo, issue: item.issue, title: item.title, body: item.body,
      branch, worktree: worktree.path, episodeKey: `item-${item.id}`,
    }));
    const launched = await deps.launcher.launch(workerSpec(deps, item, {
      name, cwd: worktree.path, promptFile,
      argv: [config.worker.binary, ...config.worker.args, ...(resume ? config.worker.resume_args : [])],
    }));
    store.transaction(() => {
      recordSession(store, {
        id: launched.sessionId, item: item.id, name, host: deps.host, launcher: launched.launcher, marker: launched.marker,
        worktree: worktree.path, branch, started_at: isoSeconds(now()), simulated: item.simulated, ...workerProcess(deps.sessionRoot, launched.sessionId),
      }, attempt);
      transition(store, item.id, "active", { reason: `its worker was ${resume ? "resumed" : "restarted"}`, details: { session: launched.sessionId, name, earlier: earlier?.id ?? null } });
    });
    const session = { name, id: launched.sessionId, branch, worktree: worktree.path };
    await tell(deps, item, options.how, relaunchComment({ host: deps.host, ...session, attempt, how: options.how, earlier: earlier?.id ?? null }));
    return { item: item.id, how: options.how, result: "active", attempt, earlier: earlier?.id ?? null, session, reason: null };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    transition(store, item.id, "failed", { reason });
    await tell(deps, item, "failed", failureComment({ host: deps.host, item: item.id }));
    return { item: item.id, how: options.how, result: "failed", attempt, earlier: earlier?.id ?? null, session: null, reason };
  }
}

/** The pause, a hold, or a full cap refuses, as they hold back dispatch. */
function refuseWhenWithheld(deps: DispatchDeps, item: WorkItem): void {
  const force = "; --force starts it anyway";
  const paused = pauseState(deps.store);
  if (paused) throw new PreconditionError(`Dispatch is ${describePause(paused)}${force}`);
  const hold = findHold(deps.store, item.id, item.repo);
  if (hold) throw new PreconditionError(`Work item ${item.id}: ${describeWait(hold)}${force}`);
  const capacity = observeCapacity({ sessionRoot: deps.sessionRoot, config: deps.config, store: deps.store });
  const answer = capacity.canDispatch(item.repo);
  if (!answer.ok) throw new PreconditionError(`${answer.reason.charAt(0).toUpperCase()}${answer.reason.slice(1)}${force}`);
}

/**
 * Closes the rows of earlier sessions whose records say how they ended, as the daemon's
 * settle step would; a row whose record is gone or cannot be read is left for the daemon
 * (its exit may still be in the spool).
 */
function closeEndedRows(deps: DispatchDeps, rows: ReturnType<typeof sessionsOf>): void {
  for (const row of rows.filter((r) => r.ended_at === null)) {
    let record;
    try {
      record = readRecord(deps.sessionRoot, row.id);
    } catch {
      continue;
    }
    if (!record || sessionState(deps.sessionRoot, record) !== "exited") continue;
    closeFromExit(deps.store, row, exitOfRecord(record));
  }
}

/** The claim, through the states the item's own may reach it by. */
function toDispatching(deps: DispatchDeps, item: WorkItem, how: Relaunch): void {
  deps.store.transaction(() => {
    if (item.state === "active" || item.state === "awaiting_review") transition(deps.store, item.id, "interrupted", { reason: "no session of it runs" });
    if (item.state === "failed" || item.state === "needs_info") transition(deps.store, item.id, "ready", { reason: `${how} by the owner` });
    transition(deps.store, item.id, "dispatching", { reason: `${how} by the owner`, details: claimDetails() });
  });
}

/** `ra-<repo>-<issue>` for a first attempt, else `...-<attempt>`, moved on past any name already on record. */
function freeName(sessionRoot: string, item: WorkItem, attempt: number): { name: string; attempt: number } {
  const taken = new Set(listRecords(sessionRoot).map((r) => r.name));
  const base = sessionName(item);
  for (let n = attempt; ; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (!taken.has(name)) return { name, attempt: n };
  }
}
