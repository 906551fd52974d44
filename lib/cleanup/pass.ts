/**
 * The daemon's cleanup step: with `[cleanup] on_issue_close = true`, every done item offered
 * (`cleanupCandidates`) is decided by the same `cleanupItem` the `cleanup` command runs; and,
 * whatever that setting, bundles older than `[cleanup] keep_bundles` (by the clock of the
 * decision that wrote them) are removed, each an audited `bundle.remove`.
 */
import { rmSync, existsSync } from "node:fs";
import { isoSeconds, now } from "../clock.ts";
import { parseDuration } from "../duration.ts";
import { auditEffect } from "../store/audit.ts";
import type { DaemonEvent } from "../daemon/events.ts";
import { cleanupCandidatesNow } from "./cleanup.ts";
import type { CleanupDeps } from "./cleanup.ts";
import type { CleanupState } from "./records.ts";

/** What the step did: decisions by state, items that could not be decided, bundles removed. */
export interface CleanupPass {
  decided: Record<CleanupState, number>;
  failed: number;
  bundles_removed: number;
  events: DaemonEvent[];
}

/** Runs the step. */
export async function cleanupPass(deps: CleanupDeps): Promise<CleanupPass> {
  const pass: CleanupPass = { decided: { done: 0, branch_retained: 0, retained: 0, skipped: 0 }, failed: 0, bundles_removed: 0, events: [] };
  if (deps.config.cleanup.on_issue_close) {
    const run = await cleanupCandidatesNow(deps, "pass");
    for (const decision of run.decisions) {
      if (!decision.recorded) continue;
      pass.decided[decision.record.state]++;
      const { item, record } = decision;
      pass.events.push({
        event: "cleanup", line: `cleanup of work item ${item.id} (${item.repo}#${item.issue}): ${record.state} (${record.reason})`,
        item: item.id, state: record.state, simulated: record.simulated,
      });
    }
    for (const failure of run.failed) {
      pass.failed++;
      pass.events.push({ event: "cleanup_failed", line: `cleanup of work item ${failure.item} could not be decided: ${failure.error}`, item: failure.item });
    }
  }
  if (deps.effects.worktrees) pass.bundles_removed = await removeOldBundles(deps, pass.events);
  return pass;
}

/** Removes the bundles cleanup records name that were written longer ago than `keep_bundles`. */
async function removeOldBundles(deps: CleanupDeps, events: DaemonEvent[]): Promise<number> {
  const cutoff = isoSeconds(new Date(now().getTime() - parseDuration(deps.config.cleanup.keep_bundles, "cleanup.keep_bundles")));
  const rows = deps.store.statement(
    "SELECT c.item, c.bundle, c.at, w.repo FROM cleanups c JOIN work_items w ON w.id = c.item WHERE c.bundle IS NOT NULL AND c.at < ? ORDER BY c.id",
  ).all(cutoff) as Array<{ item: number; bundle: string; at: string; repo: string }>;
  let removed = 0;
  for (const row of rows) {
    if (!existsSync(row.bundle)) continue;
    await auditEffect(
      deps.store,
      { kind: "bundle.remove", repo: row.repo, item: row.item, body: { file: row.bundle, written_at: row.at, keep_bundles: deps.config.cleanup.keep_bundles } },
      () => rmSync(row.bundle, { force: true }),
    );
    removed++;
    events.push({ event: "bundle_removed", line: `bundle "${row.bundle}" of work item ${row.item} removed: written ${row.at}, older than ${deps.config.cleanup.keep_bundles}`, item: row.item });
  }
  return removed;
}
