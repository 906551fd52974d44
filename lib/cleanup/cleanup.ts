/**
 * Cleanup: a finished item's disk reclaimed only when provably safe (issue 12, DESIGN rule
 * 2). The daemon's pass (with `[cleanup] on_issue_close`), `robot-army cleanup` and
 * `robot-army worktree remove <id>` all decide through `cleanupItem`, which removes through
 * the one removal path (checkout.ts) and records every decision (records.ts):
 * - `done`: worktree and branch gone; `branch_retained`: the worktree gone, the branch kept
 *   (its commits could not be proven on origin); `retained`: git refused the worktree, or its
 *   directory survived a reported removal; `skipped`: a session row of the item is open.
 * - The session guard asks the item's session rows and nothing else: an open row refuses,
 *   whether or not its process can be seen, whatever the item's state.
 * - An uncommitted episode record robot-army wrote (proven: lib/cleanup/own-records.ts) is
 *   archived under the state dir before the removal, so alone it keeps nothing.
 * - Only `skipped` is revisited by the pass. A kept item whose session is open is not
 *   offered to the pass or to bare `cleanup`; `cleanup <id>` still considers it.
 */
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { PreconditionError } from "../errors.ts";
import type { Config } from "../config.ts";
import type { Effects } from "../effects.ts";
import type { Store } from "../store/open.ts";
import { keptSession } from "../ending/keeps.ts";
import { pullRequestsOf } from "../intake/pull-requests.ts";
import { getItem, requireItem } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { itemsWithSessions, latestSession, sessionsOf } from "../work-items/sessions.ts";
import { removeCheckout } from "./checkout.ts";
import type { CheckoutRemoval, SessionGuard } from "./checkout.ts";
import { latestCleanup, latestRealCleanup, recordCleanup } from "./records.ts";
import type { CleanupBy, CleanupRecord, CleanupState } from "./records.ts";
import { baseBranchOf } from "../repos/base-branch.ts";

/** What cleanup works with. */
export interface CleanupDeps {
  store: Store;
  config: Pick<Config, "repos" | "cleanup">;
  stateDir: string;
  effects: Pick<Effects, "worktrees" | "level">;
}

/** One decision made: the record written, and the removal as it happened (none when the session guard refused first). */
export interface CleanupDecision {
  item: WorkItem;
  record: CleanupRecord;
  removal: CheckoutRemoval | null;
  /** False when the decision repeats the item's latest `skipped` one word for word: nothing new was recorded. */
  recorded: boolean;
}

/** The episode keys an item's workers were given, one per session row: an uncommitted record of another key is not the item's. */
export function episodeKeysOf(store: Store, itemId: number): string[] {
  return [...new Set(sessionsOf(store, itemId).map((s) => s.episode_key))];
}

/** The checkout an item's sessions worked in: the latest session's worktree and branch, or undefined when it never had one. */
export function checkoutOf(store: Store, itemId: number): { path: string; branch: string } | undefined {
  const last = latestSession(store, itemId);
  return last ? { path: last.worktree, branch: last.branch } : undefined;
}

/** The session guard for an item, asked of its session rows only: any open row refuses. */
export function sessionRowsGuard(store: Store, itemId: number): SessionGuard {
  const open = sessionsOf(store, itemId).filter((s) => s.ended_at === null);
  if (open.length === 0) return { live: false };
  const names = open.map((s) => `${s.name} (${s.id})`).join(", ");
  return { live: true, why: `session row ${names} is open: nothing has closed it, whether or not its process can be seen` };
}

/** The simulated host's signature on a session row: no pid, no start time (a row made below `no-remote`). */
export function simulatedSignature(session: { pid?: number | null; pid_started_at?: string | null; simulated: boolean }): boolean {
  return session.simulated && !session.pid && !session.pid_started_at;
}

/**
 * The done items cleanup offers to the pass and to bare `cleanup`: never decided, or last
 * `skipped`; a kept item with an open session is not offered. A simulated decision (made
 * below `local`, touching nothing) is never final: only real ones count.
 */
export function cleanupCandidates(store: Store): number[] {
  // An item whose disk is settled (its latest record a real done or branch_retained) is never a candidate: only its unsettled ones are read.
  return itemsWithSessions(store, "done", { unsettled: true }).filter((id) => {
    const last = latestRealCleanup(store, id);
    return (last === undefined || last.state === "skipped") && keptSession(store, id) === undefined;
  });
}

/**
 * Decides one item: refuses an item that is not finished, has no worktree on record, or
 * whose repository is not configured; otherwise removes under the guards and records the
 * decision. `worktree remove <id>` passes `force` (typed at a terminal) and takes `abandoned` items too.
 */
export async function cleanupItem(
  deps: CleanupDeps,
  itemId: number,
  options: { by: CleanupBy; force?: { session?: boolean; worktree?: boolean; branch?: boolean } },
): Promise<CleanupDecision> {
  const { store } = deps;
  const item = requireItem(store, itemId);
  const finished: readonly string[] = options.by === "worktree remove" ? ["done", "abandoned"] : ["done"];
  if (!finished.includes(item.state)) throw new PreconditionError(`Work item ${itemId} is ${item.state}; cleanup considers ${finished.join(" and ")} items only`);
  const checkout = checkoutOf(store, itemId);
  if (!checkout) throw new PreconditionError(`Work item ${itemId} never had a worktree: there is nothing to clean up`);
  const repo = deps.config.repos[item.repo];
  if (!repo) throw new PreconditionError(`Repository "${item.repo}" of work item ${itemId} is not in the config, so its clone cannot be asked; nothing was removed`);
  const before = latestCleanup(store, itemId);
  const session = options.force?.session ? { live: false as const } : sessionRowsGuard(store, itemId);
  const pullNumbers = merged(store, itemId);
  const removal = await removeCheckout(
    deps,
    { repo: item.repo, item: itemId, repoPath: repo.path, path: checkout.path, branch: checkout.branch, base: baseBranchOf(deps.store, deps.config, item.repo), pullNumbers, episodeKeys: episodeKeysOf(store, itemId) },
    { session, force: { worktree: options.force?.worktree === true, branch: options.force?.branch === true } },
  );
  const state = stateOf(removal);
  const reason = reasonOf(removal, deps.effects.level, options.by);
  if (state === "skipped" && before?.state === "skipped" && before.reason === reason) {
    return { item, record: before, removal, recorded: false };
  }
  const record = recordCleanup(store, {
    item: itemId, state, reason, worktree_path: checkout.path, branch: checkout.branch,
    worktree: removal.worktree.status === "kept" ? "kept" : removal.worktree.status,
    branch_outcome: removal.branch.status,
    proof: removal.proof ?? null, tip: removal.tip ?? null, bundle: removal.bundle ?? null, restore: removal.restore ?? null,
    by: options.by, simulated: removal.simulated,
  });
  return { item: getItem(store, itemId)!, record, removal, recorded: true };
}

/** What the pass and bare `cleanup` did: every decision, and the items that could not be decided and why. */
export interface CleanupRun {
  decisions: CleanupDecision[];
  failed: Array<{ item: number; error: string }>;
}

/** Decides every candidate (`cleanupCandidates`), one after another; an item that cannot be decided is reported and the rest go on. */
export async function cleanupCandidatesNow(deps: CleanupDeps, by: "pass" | "cleanup"): Promise<CleanupRun> {
  const run: CleanupRun = { decisions: [], failed: [] };
  for (const id of cleanupCandidates(deps.store)) {
    try {
      run.decisions.push(await cleanupItem(deps, id, { by }));
    } catch (error) {
      run.failed.push({ item: id, error: (error as Error).message });
    }
  }
  return run;
}

/** The state a removal leaves: which halves are gone decides it. */
function stateOf(removal: CheckoutRemoval): CleanupState {
  if (removal.worktree.status === "kept") return removal.worktree.code === "session" ? "skipped" : "retained";
  return removal.branch.status === "kept" ? "branch_retained" : "done";
}

/** The decision in words, as `show` and `worktree list` print it; a manual one ends naming its command. */
function reasonOf(removal: CheckoutRemoval, level: string, by: CleanupBy): string {
  const { worktree, branch } = removal;
  const parts: string[] = [];
  if (worktree.status === "kept") parts.push(worktree.code === "session" ? worktree.reason : `worktree kept: ${worktree.reason}`);
  else if (worktree.status === "simulated") parts.push("worktree removal simulated");
  else if (worktree.status === "removed") parts.push(worktree.deleted?.length ? `worktree removed with the ignored ${worktree.deleted.join(", ")}` : "worktree removed");
  else parts.push("worktree already gone");
  const archived = removal.archived?.length ?? 0;
  if (archived) parts.push(`${archived} episode record${archived === 1 ? "" : "s"} robot-army wrote archived in ${dirname(removal.archived![0].archive)}`);
  if (branch.status === "kept") parts.push(`branch kept: ${branch.reason}`);
  else if (branch.status === "simulated") parts.push("branch deletion simulated");
  else if (branch.status === "deleted") parts.push(`branch deleted (${removal.proof})`);
  else if (branch.status === "absent") parts.push("branch already gone");
  let text = parts.join("; ");
  if (removal.simulated) text += ` — effect level ${level}: version control is real from local`;
  if (by === "worktree remove") text += " — by robot-army worktree remove";
  return text;
}

/** The numbers of the item's merged pull requests: their `refs/pull/<n>/head` can prove a squash-merged branch. */
function merged(store: Store, itemId: number): number[] {
  const pulls = pullRequestsOf(store, itemId);
  return pulls === "not checked" ? [] : pulls.filter((pull) => pull.merged_at !== null).map((pull) => pull.number);
}

/** Whether a record's bundle is still on disk, so its restore command still works. */
export function bundleKept(record: CleanupRecord): boolean {
  return record.bundle === null ? record.restore !== null : existsSync(record.bundle);
}
