/**
 * The daemon's cleanup step: with `[cleanup] on_issue_close = true`, every done item offered
 * (`cleanupCandidates`) is decided by the same `cleanupItem` the `cleanup` command runs; and,
 * whatever that setting, bundles older than `[cleanup] keep_bundles` (by the clock of the
 * audit log's record of their writing) are removed, each an audited `bundle.remove`.
 */
import { rmSync, existsSync } from "node:fs";
import { isoSeconds, now } from "../clock.ts";
import { parseDuration } from "../duration.ts";
import { advanceCursor, auditEffect, lastAuditId, newLogCursor, queryAudit } from "../store/audit.ts";
import type { LogCursor } from "../store/audit.ts";
import type { DaemonEvent } from "../events.ts";
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

/**
 * Runs the step. With `bundles` (the daemon's cursor, kept from pass to pass) only the bundles
 * written since the last pass, those not old enough yet and those whose removal failed are read.
 */
export async function cleanupPass(deps: CleanupDeps, cursors: { bundles?: BundleCursor } = {}): Promise<CleanupPass> {
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
  if (deps.effects.worktrees) pass.bundles_removed = await removeOldBundles(deps, pass.events, cursors.bundles);
  return pass;
}

/**
 * Where the bundle removal has got to, kept from pass to pass: the bundles written up to
 * `after` read (those whose removal failed in `again`), and of those, the ones not old enough
 * yet with when they were written, read again once they are. A new one reads the whole log.
 */
export interface BundleCursor extends LogCursor {
  young: Array<{ id: number; at: string }>;
}

/** A bundle cursor that has read nothing yet. */
export function newBundleCursor(): BundleCursor {
  return { ...newLogCursor(), young: [] };
}

/**
 * Removes every bundle robot-army wrote (each `bundle.write` outcome in the audit log, which
 * is never purged: cleanup's, `worktree remove`'s, reset's and purge-simulated's alike) that
 * was written longer ago than `keep_bundles` by the clock and is still on disk. A removal that
 * fails is reported and the rest go on. With a cursor, only the bundles written since the last
 * pass are read, those come of age since, and those whose removal failed.
 */
async function removeOldBundles(deps: CleanupDeps, events: DaemonEvent[], cursor?: BundleCursor): Promise<number> {
  const keep = deps.config.cleanup.keep_bundles;
  const cutoff = isoSeconds(new Date(now().getTime() - parseDuration(keep, "cleanup.keep_bundles")));
  const top = lastAuditId(deps.store);
  const comeOfAge = cursor?.young.filter((y) => y.at < cutoff).map((y) => y.id) ?? [];
  const read = queryAudit(deps.store, { kinds: ["bundle.write"], phase: "outcome", ...(cursor ? { cursor: { after: cursor.after, again: [...cursor.again, ...comeOfAge] } } : {}) });
  const written = read.filter((r) => r.body.ok === true && typeof r.body.file === "string");
  const failed: number[] = [];
  let removed = 0;
  for (const record of written) {
    if (record.at >= cutoff) continue;
    const file = record.body.file as string;
    if (!existsSync(file)) continue;
    try {
      await auditEffect(
        deps.store,
        { kind: "bundle.remove", repo: record.repo ?? undefined, item: record.item ?? undefined, body: { file, written_at: record.at, keep_bundles: keep } },
        () => rmSync(file),
      );
    } catch (error) {
      failed.push(record.id);
      events.push({ event: "bundle_remove_failed", line: `bundle "${file}" could not be removed: ${(error as Error).message}`, item: record.item });
      continue;
    }
    removed++;
    events.push({ event: "bundle_removed", line: `bundle "${file}"${record.item === null ? "" : ` of work item ${record.item}`} removed: written ${record.at}, older than ${keep}`, item: record.item });
  }
  if (cursor) {
    const young = [...cursor.young, ...written.filter((r) => r.id > cursor.after).map((r) => ({ id: r.id, at: r.at }))].filter((y) => y.at >= cutoff);
    advanceCursor(cursor, top, failed);
    cursor.young = young;
  }
  return removed;
}
