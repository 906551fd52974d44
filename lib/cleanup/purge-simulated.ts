/**
 * `purge-simulated`: deleting the rows made below `live` (work items marked simulated, and
 * every row that hangs off them), and the worktrees those rows own. It works in three steps
 * a command puts its questions between:
 *
 * 1. `planPurge` reads what would go: the simulated items (one with a session row still
 *    open is kept, since that row is the only record of what may run, and so is one being
 *    dispatched), and the worktrees they own that are still on disk or whose branch still
 *    exists in the clone, each with its size. A worktree another item claims too is not
 *    theirs to offer.
 * 2. `removeOwnedWorktrees` removes those worktrees first, while the rows still say what
 *    they are, through the one removal path (removeCheckout), never forced. The session
 *    guard is built from the owning items' open session rows; a row carrying the simulated
 *    host's signature (pid 0 or none, no start time, and no managed session of its id on
 *    this host) does not refuse it: nothing ever ran there, and nothing would ever close it.
 * 3. `purgeRows` deletes the rows and writes one `purge.simulated` audit record saying what
 *    was purged, in one transaction, so no crash can split them. The audit log itself is
 *    never purged (lib/store/audit.ts).
 */
import { existsSync } from "node:fs";
import { branchExists } from "../boundaries/branches.ts";
import { listWorktrees, worktreePath } from "../boundaries/worktrees.ts";
import type { Config } from "../config.ts";
import { branchName } from "../work-items/branch-name.ts";
import { worktreeRoot } from "../work-items/worktree-root.ts";
import type { Effects } from "../effects.ts";
import { samePath } from "../same-path.ts";
import { readRecord } from "../sessions/records.ts";
import { appendAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { getItem, listItems } from "../work-items/queries.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { branchOfAnotherItem, sessionsOf } from "../work-items/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import { removeCheckout } from "./checkout.ts";
import type { CheckoutRemoval, SessionGuard } from "./checkout.ts";
import { simulatedSignature } from "./cleanup.ts";
import { diskUsage, formatSize } from "./disk-usage.ts";
import { baseBranchOf } from "../repos/base-branch.ts";

/** Where the purge looks: the store, the config (clones, worktree root), the state dir, the session root and this host. */
export interface PurgeDeps {
  store: Store;
  config: Config;
  stateDir: string;
  sessionRoot: string;
  host: string;
}

/** A simulated item the purge would delete, as the owner is shown it. */
export interface PurgedItem {
  id: number;
  repo: string;
  issue: number;
  state: WorkItem["state"];
}

/** A simulated item left alone, with why: a session row of it is open, or it is being dispatched. */
export interface KeptItem extends PurgedItem {
  why: string;
}

/** A worktree the purged rows own that is still on disk, or whose branch is still in the clone. */
export interface OwnedWorktree {
  /** The simulated items whose rows name it, oldest first. */
  items: number[];
  repo: string;
  path: string;
  branch: string;
  /** The onboarded clone and its base branch; null when the repository is not in the config (then it cannot be removed here). */
  clone: { path: string; base: string } | null;
  onDisk: boolean;
  branchInClone: boolean;
  /** Its size on disk, as the owner is shown it (`12.4 MiB`, `at least 3.0 KiB` when part could not be read); null when not on disk. */
  size: string | null;
  /** The pull requests opened from its branch, which can prove its commits on the remote. */
  pullNumbers: number[];
  /** Built from the owning items' open session rows. */
  session: SessionGuard;
}

/** What a purge would delete, and the worktrees to ask about. */
export interface PurgePlan {
  items: PurgedItem[];
  kept: KeptItem[];
  worktrees: OwnedWorktree[];
}

/** What became of one owned worktree. */
export interface WorktreeResult {
  worktree: OwnedWorktree;
  /** What removeCheckout did; null when it was not asked (the repository is not in the config) or failed. */
  removal: CheckoutRemoval | null;
  /** Why nothing was done to it, when removal is null. */
  skipped?: string;
}

/** The rows one purge deleted, by table, and the audit record saying so. */
export interface PurgeResult {
  items: number[];
  rows: Record<string, number>;
  auditId: number;
}

/** Reads what a purge would delete and the worktrees those rows own; changes nothing. */
export async function planPurge(deps: PurgeDeps): Promise<PurgePlan> {
  const { store } = deps;
  const all = listItems(store, { includeSimulated: true });
  const items: PurgedItem[] = [];
  const kept: KeptItem[] = [];
  const sessions = new Map<number, StoredSession[]>();
  for (const item of all) sessions.set(item.id, sessionsOf(store, item.id));
  for (const item of all.filter((i) => i.simulated)) {
    const about = { id: item.id, repo: item.repo, issue: item.issue, state: item.state };
    const why = keptBecause(deps, item.state, sessions.get(item.id)!);
    if (why) kept.push({ ...about, why });
    else items.push(about);
  }
  const purged = new Set(items.map((i) => i.id));
  const claims = (item: WorkItem) => checkoutsOf(deps, item, sessions.get(item.id)!);
  // A path or branch any item that stays names (a real one, or a simulated one kept) is not the purged rows' to offer.
  const others = all.filter((i) => !purged.has(i.id)).flatMap((i) => claims(i).map((c) => ({ ...c, repo: i.repo })));
  const owned = new Map<string, Omit<OwnedWorktree, "onDisk" | "branchInClone" | "size" | "pullNumbers" | "session">>();
  for (const item of all.filter((i) => purged.has(i.id))) {
    for (const claim of claims(item)) {
      if (others.some((o) => o.repo === item.repo && (samePath(o.path, claim.path) || o.branch === claim.branch))) continue;
      const key = `${item.repo}\0${claim.path}\0${claim.branch}`;
      const repo = deps.config.repos[item.repo];
      const entry = owned.get(key) ?? { items: [], repo: item.repo, path: claim.path, branch: claim.branch, clone: repo ? { path: repo.path, base: baseBranchOf(deps.store, deps.config, item.repo) } : null };
      if (!entry.items.includes(item.id)) entry.items.push(item.id);
      owned.set(key, entry);
    }
  }
  const worktrees: OwnedWorktree[] = [];
  for (const entry of owned.values()) {
    const onDisk = existsSync(entry.path);
    const branchInClone = entry.clone !== null && existsSync(entry.clone.path) && (await branchExists(entry.clone.path, entry.branch));
    if (!onDisk && !branchInClone) continue;
    const rows = entry.items.flatMap((id) => sessions.get(id)!);
    worktrees.push({
      ...entry, onDisk, branchInClone,
      size: onDisk ? describeUsage(entry.path) : null,
      pullNumbers: pullNumbersOf(store, entry.repo, entry.branch),
      session: sessionGuard(deps, rows),
    });
  }
  return { items, kept, worktrees };
}

/**
 * Removes the owned worktrees and their branches through removeCheckout, never forced, one
 * after another (each audited there). Below effect level `local` the removal is simulated
 * and reported so; a real directory still on disk then is kept (`directory_survived`).
 */
export async function removeOwnedWorktrees(
  deps: { store: Store; effects: Effects; stateDir: string; sessionRoot: string; host: string },
  worktrees: readonly OwnedWorktree[],
): Promise<WorktreeResult[]> {
  const results: WorktreeResult[] = [];
  for (const worktree of worktrees) {
    if (!worktree.clone) {
      results.push({ worktree, removal: null, skipped: `its repository ${worktree.repo} is not in the config` });
      continue;
    }
    // Asked again now, not when the worktrees were listed: the questions before this can wait for ever, and
    // an owning item resumed or being dispatched meanwhile keeps its worktree.
    const changed = worktree.items.map((id) => getItem(deps.store, id)).find((item) => !item || keptBecause(deps, item.state, sessionsOf(deps.store, item.id)) !== undefined);
    if (changed !== undefined || worktree.items.some((id) => !getItem(deps.store, id))) {
      results.push({ worktree, removal: null, skipped: "an item that owns it changed while you were asked (a session of it opened, or it is being dispatched)" });
      continue;
    }
    const session = sessionGuard(deps, worktree.items.flatMap((id) => sessionsOf(deps.store, id)));
    try {
      const removal = await removeCheckout(deps, {
        repo: worktree.repo, item: worktree.items[0], repoPath: worktree.clone.path, path: worktree.path, branch: worktree.branch,
        base: worktree.clone.base, pullNumbers: worktree.pullNumbers,
      }, { session });
      results.push({ worktree, removal });
    } catch (error) {
      // git could not be asked (the clone moved, a lock): this one stays, named, and the others are still tried.
      results.push({ worktree, removal: null, skipped: `its removal failed: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  return results;
}

/**
 * Whether what is left of an owned worktree can still be removed by its path
 * (`robot-army worktree remove <path>`): its directory is on disk, or its clone still lists it
 * as a worktree (deleted by hand, not yet pruned). A branch left alone has no path to give.
 */
export async function removableByPath(worktree: OwnedWorktree): Promise<boolean> {
  if (existsSync(worktree.path)) return true;
  if (!worktree.clone) return false;
  try {
    return (await listWorktrees(worktree.clone.path)).some((w) => !w.main && samePath(w.path, worktree.path));
  } catch {
    return false;
  }
}

/**
 * Deletes the planned items' rows, and every row that hangs off them (each table with an
 * `item` column but the audit log, and the pull requests of their branches no other item's
 * session has), with one `purge.simulated` audit record, in one transaction. An item that
 * is no longer simulated, or has come to have an open session row, is left out: only
 * what the owner was asked about goes.
 */
export function purgeRows(deps: PurgeDeps, plan: Pick<PurgePlan, "items">, outcome: { worktrees: Record<string, unknown> } = { worktrees: {} }): PurgeResult {
  const { store } = deps;
  return store.transaction(() => {
    const ids = plan.items.map((i) => i.id).filter((id) => {
      const item = getItem(store, id);
      return item?.simulated === true && keptBecause(deps, item.state, sessionsOf(store, id)) === undefined;
    });
    const rows: Record<string, number> = {};
    const count = (table: string, changes: number | bigint) => {
      rows[table] = (rows[table] ?? 0) + Number(changes);
    };
    for (const id of ids) {
      // The pull requests of its branches, unless another item's session has the same branch (theirs to show).
      const item = getItem(store, id)!;
      for (const branch of new Set(sessionsOf(store, id).map((s) => s.branch))) {
        if (branchOfAnotherItem(store, item.repo, branch, id)) continue;
        count("pull_requests", store.statement("DELETE FROM pull_requests WHERE repo = ? AND head_branch = ?").run(item.repo, branch).changes);
      }
      for (const table of itemTables(store)) count(table, store.statement(`DELETE FROM "${table}" WHERE item = ?`).run(id).changes);
      count("work_items", store.statement("DELETE FROM work_items WHERE id = ? AND simulated = 1").run(id).changes);
    }
    const audit = appendAudit(store, { kind: "purge.simulated", body: { items: ids, rows, ...outcome } });
    return { items: ids, rows, auditId: audit.id };
  });
}

/** Every table whose rows belong to a work item by an `item` column, but the audit log, which is never purged. */
function itemTables(store: Store): string[] {
  return store.statement(
    `SELECT m.name AS name FROM sqlite_master AS m, pragma_table_info(m.name) AS c
     WHERE m.type = 'table' AND c.name = 'item' AND m.name NOT IN ('audit', 'work_items') ORDER BY m.name`,
  ).all().map((row) => String((row as { name: string }).name));
}

/** The worktrees an item's rows name: each of its sessions' (path, branch), else the path and branch dispatch would give it. */
function checkoutsOf(deps: PurgeDeps, item: WorkItem, sessions: readonly StoredSession[]): Array<{ path: string; branch: string }> {
  const named = sessions.map((s) => ({ path: s.worktree, branch: s.branch }));
  // A worktree made by a start that failed before its session was recorded is at the path dispatch gives the item.
  named.push({ path: worktreePath(worktreeRoot(deps.config, deps.stateDir), item.repo, item.issue), branch: branchName(item.issue, item.title) });
  return named.filter((c, i) => named.findIndex((d) => samePath(d.path, c.path) && d.branch === c.branch) === i);
}

function pullNumbersOf(store: Store, repo: string, branch: string): number[] {
  return store.statement("SELECT number FROM pull_requests WHERE repo = ? AND head_branch = ? ORDER BY number").all(repo, branch)
    .map((row) => Number((row as { number: number }).number));
}

/**
 * Why a simulated item's rows stay, or undefined when they may go: a session row of it is
 * open (the only record of what may run), or it is being dispatched (a claimer may be
 * starting its worker now).
 */
function keptBecause(deps: Pick<PurgeDeps, "sessionRoot" | "host">, state: WorkItem["state"], sessions: readonly StoredSession[]): string | undefined {
  const open = openRow(deps, sessions);
  if (open) return `${open.why}; end it first (robot-army cancel ${open.row.item})`;
  if (state === "dispatching") return "it is being dispatched: a worker of it may be starting now";
  return undefined;
}

/** The size on disk of a worktree, never passed off as whole when part of it could not be read. */
function describeUsage(path: string): string {
  const usage = diskUsage(path);
  if (!usage) return "size unknown";
  return usage.unreadable > 0 ? `at least ${formatSize(usage.bytes)} (${usage.unreadable} unreadable)` : formatSize(usage.bytes);
}

/** The session guard of a worktree, from the open session rows of the items that own it. */
function sessionGuard(deps: Pick<PurgeDeps, "sessionRoot" | "host">, rows: readonly StoredSession[]): SessionGuard {
  const open = openRow(deps, rows);
  return open ? { live: open.live, why: open.why } : { live: false };
}

/** The first open row that refuses: any open row but one carrying the simulated host's signature. */
function openRow(deps: Pick<PurgeDeps, "sessionRoot" | "host">, rows: readonly StoredSession[]): { row: StoredSession; live: true | "unknown"; why: string } | undefined {
  for (const row of rows.filter((r) => r.ended_at === null)) {
    if (simulatedHost(deps, row)) continue;
    const how = row.pid ? `pid ${row.pid}` : "no pid on record";
    return { row, live: row.pid ? true : "unknown", why: `session ${row.name} (${row.id}) of work item ${row.item} is open (${how})` };
  }
  return undefined;
}

/**
 * Whether an open row carries the simulated host's signature (simulatedSignature: a simulated
 * row with no pid, or pid 0, and no start time), made on this host, where no managed session
 * of its id is on record (a real launch always leaves one). Anything else may stand for a
 * worker that runs.
 */
export function simulatedHost(deps: Pick<PurgeDeps, "sessionRoot" | "host">, row: StoredSession): boolean {
  if (!simulatedSignature(row) || row.host !== deps.host) return false;
  try {
    return readRecord(deps.sessionRoot, row.id) === undefined;
  } catch {
    // A record of its id that cannot be read may be a real launch's.
    return false;
  }
}
