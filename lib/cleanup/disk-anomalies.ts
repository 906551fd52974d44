/**
 * The anomalies about disk, raised and retracted by the pass: `orphan_worktree`, a directory
 * in the worktree root that no item claims (what `worktree remove <path>` removes), and
 * `prunable_worktree`, a finished item (done or abandoned) whose worktree is gone from disk
 * while no cleanup record says it was removed: deleted by hand, which `worktree remove <id>`
 * settles. An item whose disk is settled (`work_items.disk_settled_at`: a real record of its
 * worktree's removal, the record that keeps it from being prunable) is not looked at again.
 * Each has its path as action id and is retracted once its condition goes; while a clone's
 * worktrees cannot be listed, orphans are neither raised nor retracted. Only at
 * effect level local or above, where worktrees are real: below it nothing is looked at,
 * and nothing raised before is retracted on the strength of not looking.
 *
 * @example
 * const { raised, retracted } = await reportDiskAnomalies({ store, config, stateDir, effects });
 */
import { worktreeRoot } from "../work-items/worktree-root.ts";
import { lstatSync } from "node:fs";
import type { DaemonEvent } from "../events.ts";
import type { Effects } from "../effects.ts";
import { listAnomalies, raiseAnomaly, retractAnomaly } from "../store/anomalies.ts";
import type { AnomalyKind } from "../store/anomalies.ts";
import { cloneWorktrees, unclaimedDirectories, worktreeClaims } from "./unclaimed.ts";
import type { Claim, UnclaimedDeps } from "./unclaimed.ts";
import type { WorktreeListMemo } from "../boundaries/worktree-list-memo.ts";

/**
 * What the disk anomalies read: the store, the config and state dir (the worktree root), and
 * whether worktrees are real; the daemon's memo of the clones' worktree lists, kept between its
 * passes, so git is asked only once a clone's worktrees changed.
 */
export interface DiskAnomalyDeps extends UnclaimedDeps {
  effects: Pick<Effects, "worktrees">;
  worktreeLists?: WorktreeListMemo;
}

/** What one pass did: anomalies raised and retracted, and an event for each, as the tick reports its steps'. */
export interface DiskAnomalyReport {
  raised: number;
  retracted: number;
  events: DaemonEvent[];
}

/** Raises what is newly so and retracts what no longer is, for both kinds. */
export async function reportDiskAnomalies(deps: DiskAnomalyDeps): Promise<DiskAnomalyReport> {
  const report: DiskAnomalyReport = { raised: 0, retracted: 0, events: [] };
  if (!deps.effects.worktrees) return report;
  // Only the items whose disk is not settled: the finished ones settled are not read again (unclaimedDirectories asks
  // the store about them for a folder nothing else claims).
  const claims = worktreeClaims(deps.store, worktreeRoot(deps.config, deps.stateDir), { unsettled: true });
  const orphans = new Map<string, { repo: string | null; detail: string }>();
  const listed = await cloneWorktrees(deps.store, deps.config, deps.worktreeLists);
  for (const dir of await unclaimedDirectories(deps, { claims, worktrees: listed.worktrees })) {
    orphans.set(dir.path, {
      repo: dir.repo,
      detail: `"${dir.path}" is in the worktree root and no work item claims it${dir.branch ? ` (branch ${dir.branch})` : ""}: "robot-army worktree remove ${dir.path}" removes it once no worker is in it`,
    });
  }
  const prunable = new Map<string, { claim: Claim; detail: string }>();
  for (const claim of claims) {
    if (claim.state !== "done" && claim.state !== "abandoned") continue;
    if (!provenGone(claim.path)) continue;
    prunable.set(claim.path, {
      claim,
      detail: `the worktree "${claim.path}" of work item ${claim.item} (${claim.repo}#${claim.issue}, ${claim.state}) is gone from disk, but no cleanup record says it was removed: "robot-army worktree remove ${claim.item}" settles it`,
    });
  }
  // Which directories are worktrees, and where, is git's to say: while a clone's list cannot be read, the
  // orphans are neither raised nor retracted (a folder may hold a worktree that list alone would show).
  if (listed.unreadable.length === 0) settle(deps, report, "orphan_worktree", new Map([...orphans].map(([path, o]) => [path, { repo: o.repo ?? undefined, detail: o.detail }])));
  settle(deps, report, "prunable_worktree", new Map([...prunable].map(([path, p]) => [path, { repo: p.claim.repo, item: p.claim.item, detail: p.detail }])));
  return report;
}

/** Raises each of `now` not already unresolved, and retracts each unresolved one of the kind whose path is not among them. */
function settle(deps: DiskAnomalyDeps, report: DiskAnomalyReport, kind: AnomalyKind, now: Map<string, { repo?: string; item?: number; detail: string }>): void {
  for (const [path, found] of now) {
    const { raised } = raiseAnomaly(deps.store, { kind, actionId: path, repo: found.repo, item: found.item, detail: found.detail });
    if (!raised) continue;
    report.raised++;
    report.events.push({ event: kind, line: `${kind}: ${found.detail}`, path, ...(found.item === undefined ? {} : { item: found.item }) });
  }
  for (const anomaly of listAnomalies(deps.store, { unresolved: true, kind })) {
    if (anomaly.action_id === null || now.has(anomaly.action_id)) continue;
    retractAnomaly(deps.store, anomaly.id);
    report.retracted++;
    const why = kind === "orphan_worktree" ? "it is claimed or gone" : "its removal is on record, or its directory is back";
    report.events.push({ event: `${kind}_retracted`, line: `${kind} of "${anomaly.action_id}" retracted: ${why}`, path: anomaly.action_id });
  }
}

/** Whether nothing is at `path`: only "no such file" proves it; a look that fails otherwise is not proof. */
function provenGone(path: string): boolean {
  try {
    lstatSync(path);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}
