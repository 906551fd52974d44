/**
 * Whether a dispatch cut short ever started a worker. A daemon killed between claiming an
 * item and launching its worker leaves the item `dispatching` with nothing running and
 * nothing that could be lost; settling the claim (lib/daemon/settle-claims.ts) puts such an
 * item back in the queue by itself rather than leave it `interrupted` for its owner. That
 * needs proof that no worker process of this dispatch ever started, every piece of it read:
 *
 * - the claim was a fresh dispatch from the queue (a new worktree and branch), not a resume
 *   or restart that carries earlier work on;
 * - every effect written after the claim has its outcome (the unfinished-effect sweep settles
 *   one cut short first), and none of them is the worker's launch: a launch begun may have
 *   started a worker that ended since (its holder removes the record of a worker that ended
 *   cleanly) or may start one yet (a holder coming up after the launch gave up);
 * - no session record in the session root, other than those of the item's earlier sessions,
 *   is tagged for the item (or works in its worktree) with a child pid, or with a holder that
 *   runs or cannot be checked (it may yet start one);
 * - the terminal holds no window marked for the item (asked of the launcher; a terminal that
 *   cannot be asked proves nothing);
 * - the item's branch has no commit of its own: absent with no folder at the worktree's path,
 *   or checked out there at the commit its worktree was made at (or one already on the base),
 *   and the worktree has no uncommitted change git sees.
 *
 * Anything missing, or that cannot be read, is an answer of "not proven" with why, and the
 * item is interrupted for the owner as before (DESIGN rule 1). Nothing is written here.
 */
import { existsSync } from "node:fs";
import { branchTip, isAncestor } from "../boundaries/branches.ts";
import { existingWorktree, worktreeDirty, worktreePath } from "../boundaries/worktrees.ts";
import type { Launcher } from "../boundaries/launchers/types.ts";
import type { Config } from "../config.ts";
import { FRESH_CLAIM } from "../dispatch/claim.ts";
import { knownBaseBranch } from "../repos/base-branch.ts";
import { samePath } from "../same-path.ts";
import { scanRecords } from "../sessions/records.ts";
import { workerRuns } from "../sessions/state.ts";
import { ITEM_TAG, STORE_TAG } from "../sessions/worker-tags.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { branchName } from "../work-items/branch-name.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { sessionsOf } from "../work-items/sessions.ts";
import { worktreeRoot } from "../work-items/worktree-root.ts";
import { latestClaim } from "./adopt-worker.ts";

/** What the proof reads: the store, the config and state dir (where the worktree is), the session root and the launcher. */
export interface NeverStartedDeps {
  store: Store;
  config: Config;
  stateDir: string;
  sessionRoot: string;
  launcher: Launcher;
}

/** Proof that no worker started: the worktree the cut dispatch left (at the commit it was made at), or none. */
export interface NeverStarted {
  worktree: { path: string; branch: string; head: string } | null;
}

/** Why it is not proven; `resumed` when the claim was no fresh dispatch (a resume, a restart), where the question does not arise. */
export interface NotProven {
  not: string;
  resumed?: true;
}

/** The proof that no worker process of the item's cut-short dispatch ever started, or why that is not proven. */
export async function neverStarted(deps: NeverStartedDeps, item: WorkItem): Promise<NeverStarted | NotProven> {
  const claim = latestClaim(deps.store, item.id);
  if (!claim || claim.body[FRESH_CLAIM] !== true) return { not: "its claim was not a fresh dispatch from the queue", resumed: true };
  const after = queryAudit(deps.store, { item: item.id, afterId: claim.id });
  const open = after.find((r) => r.phase === "intent" && !after.some((o) => o.phase === "outcome" && o.actionId === r.actionId));
  if (open) return { not: `its ${open.kind} has no outcome yet` };
  const repo = Object.hasOwn(deps.config.repos, item.repo) ? deps.config.repos[item.repo] : undefined;
  if (!repo) return { not: `repository ${item.repo} is not in the config, so its branch cannot be read` };
  // Where its worktree is, as the dispatch's own records name it (the launch names it as cwd), else where dispatch makes one.
  const made = after.filter((r) => r.kind === "worktree.create");
  const named = after.filter((r) => r.phase === "intent" && (r.kind === "worktree.create" || r.kind === "session.launch")).at(-1)?.body;
  const path = stringOf(named?.path) ?? stringOf(named?.cwd) ?? worktreePath(worktreeRoot(deps.config, deps.stateDir), item.repo, item.issue);
  const branch = stringOf(named?.branch) ?? branchName(item.issue, item.title);

  // A launch begun may have started a worker that has since ended, its record gone with it (a holder removes the record
  // of a worker that ended cleanly), or may start one yet (a holder coming up after the launch gave up): never requeued.
  const launch = after.find((r) => r.kind === "session.launch" && r.phase === "intent");
  if (launch) return { not: `its worker's launch had begun (session ${String(launch.body.session ?? launch.sessionId)}), so a worker may have run` };
  const session = sessionEvidence(deps, item.id, path);
  if (session) return { not: session };
  const tabs = await deps.launcher.tabs(item.id);
  if (tabs === "unknown") return { not: `whether a ${deps.launcher.name} window is marked for it cannot be checked` };
  const tab = tabs.find((t) => t.store === null || t.store === deps.store.path);
  if (tab) return { not: `${deps.launcher.name} window ${tab.id} is marked for it` };

  try {
    const tip = await branchTip(repo.path, branch);
    if (!existsSync(path)) return tip === undefined ? { worktree: null } : { not: `its branch ${branch} is in the clone without its worktree` };
    const found = await existingWorktree({ repoPath: repo.path, path, branch });
    if (!found) return { not: `"${path}" is not its worktree on branch ${branch}` };
    const head = made.map((r) => stringOf(r.body.head)).filter((h) => h !== undefined).at(-1);
    const base = knownBaseBranch(deps.store, deps.config, item.repo);
    const ownCommits = found.head !== head && !(base && await isAncestor(repo.path, found.head, `refs/remotes/origin/${base}`));
    if (ownCommits) return { not: `its branch ${branch} has commits of its own` };
    // Changes nobody committed are work too (its post-create steps' own output is ignored by git, or counts here).
    if (await worktreeDirty(path)) return { not: `its worktree "${path}" has uncommitted changes` };
    return { worktree: found };
  } catch (error) {
    return { not: `its branch cannot be read (${(error as Error).message})` };
  }
}

/**
 * Why a session record says a worker of this dispatch may have started, or undefined when none
 * does: a record tagged for the item in this store (or working in its worktree), not one of its
 * earlier sessions', with a child pid, or with a holder that runs or cannot be checked.
 */
function sessionEvidence(deps: NeverStartedDeps, item: number, worktree: string): string | undefined {
  if (!existsSync(deps.sessionRoot)) return undefined;
  let scanned;
  try {
    scanned = scanRecords(deps.sessionRoot);
  } catch (error) {
    return `the session root cannot be read (${(error as Error).message})`;
  }
  if (scanned.unreadable.length) return `session record "${scanned.unreadable[0].file}" cannot be read`;
  const earlier = new Set(sessionsOf(deps.store, item).map((s) => s.id));
  for (const record of scanned.records) {
    if (earlier.has(record.id)) continue;
    const tags = record.tags ?? {};
    const tagged = tags[ITEM_TAG] === String(item) && (tags[STORE_TAG] === undefined || tags[STORE_TAG] === deps.store.path);
    if (!tagged && !samePath(record.cwd, worktree)) continue;
    if (record.childPid !== null) return `session "${record.name}" started its worker (pid ${record.childPid})`;
    const runs = workerRuns(deps.sessionRoot, record);
    if (runs !== false) return `session "${record.name}" ${runs === true ? "still runs and may yet start its worker" : "cannot be checked"}`;
  }
  return undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
