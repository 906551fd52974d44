/**
 * `resume` and `restart`: a new session for an item in the worktree and on the branch it
 * already has. `resume` starts the worker so its context is restored (as its profile
 * says: Claude Code by the earlier session's id, other workers with `worker.resume_args`); `restart` starts it fresh
 * with the prompt. Both give the worker the item's prompt file, written afresh for this attempt (its
 * episode key is the new session's): a resumed agent finds the task its context names where it was,
 * and a worker with no context of its own to restore (the demo worker) carries on from it and its worktree. Both pass the same gate as dispatch (lib/dispatch/gate.ts): `force`
 * lifts the pause, holds and caps, never the repository's trust, an unobservable capacity
 * or a missing worker program. Both refuse while a live session (or one that cannot be
 * checked) works for the item or in its worktree. Every reason known before the launch
 * refuses (PreconditionError) before anything changes, so only a launch that really failed
 * fails the item and tells its issue.
 *
 * The new session is the item's next attempt on record; its name comes from sessionName,
 * moved on past any name already on record (lib/dispatch/session-name.ts).
 */
import { takeClaim } from "../../work-items/issue-claims.ts";
import { existingWorktree, worktreePath } from "../../boundaries/worktrees.ts";
import { openJournal } from "../../episodes/journal.ts";
import { findOpen } from "../../episodes/open-episodes.ts";
import { PreconditionError, RobotArmyError } from "../../errors.ts";
import { readRecord } from "../../sessions/records.ts";
import { exitOf } from "../../sessions/spool.ts";
import { sessionState } from "../../sessions/state.ts";
import { requireItem, getItem } from "../../work-items/queries.ts";
import type { WorkItemState } from "../../work-items/queries.ts";
import { latestSession, sessionsOf } from "../../work-items/sessions.ts";
import { transition } from "../../work-items/transition.ts";
import { closeFromExit } from "../../ending/worker-ended.ts";
import { branchName } from "../../work-items/branch-name.ts";
import { claimDetails } from "../claim.ts";
import { relaunchComment } from "../comments.ts";
import type { Relaunch } from "../comments.ts";
import type { DispatchDeps } from "../dispatch-deps.ts";
import { gate } from "../gate.ts";
import { startWorker } from "../start-worker.ts";
import { worktreeRoot } from "../../work-items/worktree-root.ts";
import { describeLive, liveSessionOf } from "./live-session.ts";

/** States a new session may be given from; `active` and `awaiting_review` only once no session runs. */
export const RELAUNCHABLE: readonly WorkItemState[] = ["interrupted", "failed", "needs_info", "active", "awaiting_review"];

/** What `resume` / `restart` did. */
export interface RelaunchOutcome {
  item: number;
  how: Relaunch;
  result: "active" | "failed";
  /** The new session's attempt: one more than the item's sessions on record. */
  attempt: number;
  /** The session it continues or supersedes; null when none is on record. */
  earlier: string | null;
  session: { name: string; id: string; branch: string; worktree: string } | null;
  /** Why it failed (private: never in a public comment). */
  reason: string | null;
}

/** A relaunch whose worker could not start: the item is failed and its issue told; exit 1 through the top-level catch. */
export class RelaunchFailedError extends RobotArmyError {
  outcome: RelaunchOutcome;
  constructor(outcome: RelaunchOutcome) {
    super(`Work item ${outcome.item}: the new session could not start: ${outcome.reason}`);
    this.name = "RelaunchFailedError";
    this.outcome = outcome;
  }
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
  const repo = config.repos[item.repo];
  if (!repo) throw new PreconditionError(`Repository "${item.repo}" of work item ${itemId} is not in the config`);
  const earlier = latestSession(store, item.id) ?? null;
  const path = earlier?.worktree ?? worktreePath(worktreeRoot(config, deps.stateDir), item.repo, item.issue);
  const branch = earlier?.branch ?? branchName(item.issue, item.title);
  const worktree = await existingWorktree({ repoPath: repo.path, path, branch });
  if (!worktree) throw new PreconditionError(`Work item ${itemId} has no worktree at "${path}" on branch "${branch}"; "robot-army retry ${itemId}" dispatches it afresh`);
  const live = liveSessionOf(store, deps.sessionRoot, item.id, worktree.path);
  if (live.live !== false) throw new PreconditionError(describeLive(live, item.id));
  const closed = await gate(deps, item, { force: options.force });
  if (closed) throw new PreconditionError(`Work item ${itemId}: ${closed.reason}; ${closed.brake ? "--force starts it anyway" : "nothing was started"}`);

  // Its issue's claim on GitHub, held before anything starts: another host holding it starts nothing here.
  const session = globalThis.crypto.randomUUID();
  const claim = await takeClaim(deps, item, options.how, { session });
  if (!claim.held) throw new PreconditionError(`Work item ${itemId}: ${claim.reason}; nothing was started`);
  // No session of the item runs, so each row still open ended: close it from its own exit record now.
  closeEndedRows(deps, item.id);
  toDispatching(deps, item.id, earlier?.id ?? null, options.how);
  const resume = options.how === "resume";
  const earlierId = earlier?.id ?? null;
  const agentSession = resume && earlier ? await agentSessionOf(worktree.path, earlier.episode_key) : undefined;
  const started = await startWorker(deps, item, {
    sessionId: session,
    worktree: async () => worktree,
    // A resume brings the earlier session back as the profile says (Claude Code: its transcript by id; others: resume_args).
    resume: resume ? { earlier: earlierId, ...(agentSession ? { agentSession } : {}) } : null,
    // A resume too: without it a worker that reads its task from the file (the demo worker) cannot go on.
    prompt: true,
    becameActive: { reason: `its worker was ${resume ? "resumed" : "restarted"}`, details: { earlier: earlierId } },
    comment: { purpose: options.how, body: (place, attempt) => relaunchComment({ ...place, attempt, how: options.how, earlier: earlierId }) },
  });
  return { item: item.id, how: options.how, earlier: earlierId, ...started };
}

/**
 * Closes the rows of earlier sessions whose records say how they ended, as the daemon's
 * settle step would; a row whose record is gone or cannot be read is left for the daemon
 * (its exit may still be in the spool).
 */
function closeEndedRows(deps: DispatchDeps, item: number): void {
  for (const row of sessionsOf(deps.store, item).filter((r) => r.ended_at === null)) {
    let record;
    try {
      record = readRecord(deps.sessionRoot, row.id);
    } catch {
      continue;
    }
    if (!record || sessionState(deps.sessionRoot, record) !== "exited") continue;
    closeFromExit(deps.store, row, exitOf(record));
  }
}

/** The claim, through the states the item's own may reach it by. */
/**
 * Claims the item for the new session. Another command (a second `resume`, the daemon) may
 * have claimed or started it since the checks above; read again in the claim's transaction,
 * that is refused in words, and this command starts nothing.
 */
function toDispatching(deps: DispatchDeps, itemId: number, earlier: string | null, how: Relaunch): void {
  deps.store.transaction(() => {
    const item = getItem(deps.store, itemId)!;
    if (item.state === "dispatching") {
      throw new PreconditionError(`Work item ${itemId} is being started by another command (it is dispatching); nothing was started`);
    }
    if (!RELAUNCHABLE.includes(item.state) || (latestSession(deps.store, itemId)?.id ?? null) !== earlier) {
      throw new PreconditionError(`Work item ${itemId} was started by another command meanwhile (it is ${item.state}); nothing was started`);
    }
    if (item.state === "active" || item.state === "awaiting_review") transition(deps.store, item.id, "interrupted", { reason: "no session of it runs" });
    if (item.state === "failed" || item.state === "needs_info") transition(deps.store, item.id, "ready", { reason: `${how} by the owner` });
    transition(deps.store, item.id, "dispatching", { reason: `${how} by the owner`, details: claimDetails() });
  });
}

/**
 * The agent's own id for the earlier session (Codex's, which its hooks reported), from its
 * episode while the file is still open in the worktree; undefined when none is on record.
 */
async function agentSessionOf(worktree: string, key: string): Promise<string | undefined> {
  try {
    return (await findOpen(await openJournal(worktree), key))?.episode?.agent_session_id;
  } catch {
    return undefined;
  }
}
